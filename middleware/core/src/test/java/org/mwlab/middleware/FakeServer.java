package org.mwlab.middleware;

import java.io.IOException;
import java.net.BindException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * A server in the test itself, listening on a loopback port from {@link Ports}: every connection
 * it accepts goes to a {@link Handler} on a daemon thread of its own and stays open until the
 * handler closes it or the server is closed.
 */
final class FakeServer implements AutoCloseable {
  /** Serves one accepted connection; an {@link IOException} ends it quietly (closed). */
  @FunctionalInterface
  interface Handler {
    void serve(Socket s) throws IOException;
  }

  private final ServerSocket socket;
  private final List<Socket> accepted = new ArrayList<>();

  FakeServer(final Handler handler) throws IOException {
    socket = bind();
    final Thread t =
        new Thread(
            () -> {
              try {
                while (true) {
                  final Socket s = socket.accept();
                  synchronized (accepted) {
                    accepted.add(s);
                  }
                  final Thread h = new Thread(() -> serve(handler, s));
                  h.setDaemon(true);
                  h.start();
                }
              } catch (IOException e) {
                // closed
              }
            });
    t.setDaemon(true);
    t.start();
  }

  private static ServerSocket bind() throws IOException {
    for (int attempt = 0; ; attempt++) {
      try {
        return new ServerSocket(Ports.next(), 50, InetAddress.getLoopbackAddress());
      } catch (BindException e) {
        if (attempt == 5) {
          throw e; // taken after it was found free, again and again
        }
      }
    }
  }

  private static void serve(final Handler handler, final Socket s) {
    try {
      handler.serve(s);
    } catch (IOException e) {
      // closed
    }
  }

  String address() {
    return "127.0.0.1:" + socket.getLocalPort();
  }

  @Override
  public void close() throws IOException {
    socket.close();
    synchronized (accepted) {
      for (final Socket s : accepted) {
        s.close();
      }
    }
  }
}
