package org.mwlab.simplemq.server;

import java.nio.channels.SocketChannel;

/**
 * A connection over the cap, told so and half-closed. The distributor reads and discards what
 * the client still sends until it closes or {@code untilNs} passes: closing a socket with unread
 * bytes would reset it, and a reset can discard the refusal before the client reads it.
 */
record RefusedConnection(SocketChannel channel, long untilNs) implements Peer {}
