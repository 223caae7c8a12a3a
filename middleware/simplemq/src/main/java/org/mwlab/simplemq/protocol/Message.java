package org.mwlab.simplemq.protocol;

import java.nio.charset.StandardCharsets;

/**
 * A stored message as a peek or a pop returns it.
 *
 * @param id the database's id: messages are ordered by it
 * @param sentAtMicros the sender's clock when it sent the message (microseconds since the epoch)
 * @param body ASCII bytes
 */
public record Message(long id, int sender, int receiver, int queue, long sentAtMicros, byte[] body) {

  public String text() {
    return new String(body, StandardCharsets.US_ASCII);
  }
}
