package org.mwlab.simplemq.server;

/**
 * What one middleware holds at most, so that no client can make it grow without bound. The
 * defaults are far above what the 2015 study's closed-loop clients reach (one request and one
 * reply of at most 4 KiB per connection, a few hundred connections in all), so its runs, which
 * pass none of these options, never meet them.
 *
 * @param maxConnections client connections served at once; one more is refused
 *     (TOO_MANY_CONNECTIONS) and closed
 * @param maxPending requests (and the error replies the distributor owes) read from one
 *     connection and not yet handed to a worker; at the limit the connection is not read
 * @param maxOutputBytes reply bytes one client has not taken; at the limit its next requests
 *     wait, and so, once they fill {@code maxPending}, does its reading
 * @param frameTimeoutMs how long a connection may stay inside a frame without sending a byte
 *     before it is closed; 0: forever
 */
public record Limits(int maxConnections, int maxPending, int maxOutputBytes, long frameTimeoutMs) {

  public static final int MAX_CONNECTIONS = 1024;
  public static final int MAX_PENDING = 32;
  public static final int MAX_OUTPUT_BYTES = 256 * 1024;
  public static final long FRAME_TIMEOUT_MS = 30_000;

  public static final Limits DEFAULTS =
      new Limits(MAX_CONNECTIONS, MAX_PENDING, MAX_OUTPUT_BYTES, FRAME_TIMEOUT_MS);

  public Limits {
    if (maxConnections < 1 || maxPending < 1 || maxOutputBytes < 1 || frameTimeoutMs < 0) {
      throw new IllegalArgumentException("limits below 1 (or a negative timeout): " + maxConnections
          + ", " + maxPending + ", " + maxOutputBytes + ", " + frameTimeoutMs);
    }
  }
}
