package org.mwlab.simplemq.server;

/**
 * When a request passed each stage (System.nanoTime): read from its client, handed to a worker,
 * started by it, answered by the database, its reply written.
 */
record Timing(long arrivalNs, long dispatchedNs, long startNs, long dbEndNs, long repliedNs) {

  long responseNs() {
    return repliedNs - arrivalNs;
  }
}
