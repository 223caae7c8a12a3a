package org.mwlab.middleware;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** A minimal blocking memcached text-protocol client for tests. */
final class TextClient implements AutoCloseable {
  private final Socket socket;
  private final InputStream in;
  private final OutputStream out;

  /** Reads give up after this long: a hang guard, not a bound on how fast a reply must come. */
  static final int HANG_GUARD_MS = 30_000;

  TextClient(final int port) {
    this(port, HANG_GUARD_MS);
  }

  TextClient(final int port, final int readTimeoutMs) {
    try {
      socket = new Socket("127.0.0.1", port);
      socket.setTcpNoDelay(true);
      socket.setSoTimeout(readTimeoutMs);
      in = socket.getInputStream();
      out = socket.getOutputStream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void send(final String s) {
    send(s.getBytes(StandardCharsets.ISO_8859_1));
  }

  void send(final byte[] b) {
    try {
      out.write(b);
      out.flush();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One line without CRLF. */
  String line() {
    final ByteArrayOutputStream b = new ByteArrayOutputStream();
    try {
      while (true) {
        final int c = in.read();
        if (c < 0) {
          throw new IllegalStateException("connection closed; got '" + b + "'");
        }
        if (c == '\n') {
          final byte[] a = b.toByteArray();
          final int n = a.length > 0 && a[a.length - 1] == '\r' ? a.length - 1 : a.length;
          return new String(a, 0, n, StandardCharsets.ISO_8859_1);
        }
        b.write(c);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Exactly {@code n} bytes. */
  byte[] bytes(final int n) {
    try {
      return in.readNBytes(n);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Lines up to and including {@code last}. */
  List<String> readUntil(final String last) {
    final List<String> lines = new ArrayList<>();
    String l;
    do {
      l = line();
      lines.add(l);
    } while (!l.equals(last));
    return lines;
  }

  /** Sends {@code set} and returns the reply line. */
  String set(final String key, final String value) {
    send("set " + key + " 0 0 " + value.length() + "\r\n" + value + "\r\n");
    return line();
  }

  /** One get reply as a flat list: key, value, key, value, ... ; or the error line. */
  List<String> readGet() {
    final List<String> r = new ArrayList<>();
    while (true) {
      final String l = line();
      if (l.equals("END")) {
        return r;
      }
      if (!l.startsWith("VALUE ")) {
        r.add(l);
        return r;
      }
      final String[] p = l.split(" ");
      final int n = Integer.parseInt(p[3]);
      final byte[] data = bytes(n + 2);
      r.add(p[1]);
      r.add(new String(data, 0, n, StandardCharsets.ISO_8859_1));
    }
  }

  List<String> get(final String... keys) {
    send("get " + String.join(" ", keys) + "\r\n");
    return readGet();
  }

  /** True if the server closed the connection, false if it sent another byte instead. */
  boolean closedByPeer() {
    try {
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      throw new IllegalStateException("neither closed nor answered", e);
    } catch (IOException e) {
      return true;
    }
  }

  /** True if a reply (or part of one) has arrived and not been read. */
  boolean hasInput() {
    try {
      return in.available() > 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** This end's port, to find the connection in /proc/net/tcp. */
  int localPort() {
    return socket.getLocalPort();
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // closing anyway
    }
  }
}
