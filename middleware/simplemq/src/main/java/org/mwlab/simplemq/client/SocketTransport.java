package org.mwlab.simplemq.client;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import org.mwlab.simplemq.protocol.Codec;
import org.mwlab.simplemq.protocol.FrameReader;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;

/**
 * One blocking TCP connection to a middleware; one request at a time, as a closed-loop client
 * sends. A reply that does not answer the request it follows is a {@link Mismatch}.
 */
public final class SocketTransport implements Transport {

  /** A reply whose request id is not the id of the request it answers. */
  public static final class Mismatch extends IOException {
    private static final long serialVersionUID = 1L;

    Mismatch(final String why) {
      super(why);
    }
  }

  private final SocketChannel channel;
  private final FrameReader reader;
  private final ByteBuffer in = ByteBuffer.allocate(64 * 1024);

  public SocketTransport(final InetSocketAddress target, final int maxFrame) throws IOException {
    channel = SocketChannel.open(target);
    channel.socket().setTcpNoDelay(true);
    reader = new FrameReader(maxFrame);
    in.flip();
  }

  @Override
  public Reply call(final Request request) throws IOException {
    send(Codec.frame(request));
    final Reply reply = receive();
    if (reply.requestId() != request.requestId()) {
      throw new Mismatch("request " + request.requestId() + " answered by a reply to "
          + reply.requestId());
    }
    return reply;
  }

  /** Writes raw bytes (tests send malformed frames this way). */
  public void send(final byte[] bytes) throws IOException {
    final ByteBuffer out = ByteBuffer.wrap(bytes);
    while (out.hasRemaining()) {
      channel.write(out);
    }
  }

  /** Reads the next reply. */
  public Reply receive() throws IOException {
    while (true) {
      final FrameReader.Event e = reader.next(in);
      if (e instanceof FrameReader.Frame f) {
        return Codec.reply(f.body());
      }
      if (e instanceof FrameReader.Oversized o) {
        throw new IOException("a reply of " + o.length() + " bytes is longer than accepted");
      }
      in.clear();
      final int n = channel.read(in);
      in.flip();
      if (n < 0) {
        throw new java.io.EOFException("the middleware closed the connection");
      }
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
  }
}
