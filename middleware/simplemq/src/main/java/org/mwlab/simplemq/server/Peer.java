package org.mwlab.simplemq.server;

/** What a distributor's selection key is attached to. */
sealed interface Peer permits ClientConnection, RefusedConnection {}
