package org.mwlab.simplemq.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.mwlab.simplemq.protocol.Request;

/** The clients' workloads: the seed's turn order and addressing, and the bodies' tags. */
class WorkloadTest {

  @Test
  void staticSendsToTheNextClientThenPeeksAndPopsItsOwn() {
    final Workload w = new Workload.Static(1, 200, 1, 3);
    final Request.Send s = assertInstanceOf(Request.Send.class, w.next(2, 0, 10, 0));
    assertEquals(3, s.receiver());
    assertEquals(200, s.body().length);
    assertEquals(new Request.PeekQueue(11, 1, 2), w.next(2, 1, 11, 1));
    assertEquals(new Request.PopQueue(12, 1, 2), w.next(2, 2, 12, 1));
    // The last client sends to the first.
    assertEquals(1, ((Request.Send) w.next(3, 3, 13, 1)).receiver());
  }

  @Test
  void sharedReceiverAlternatesSendAndPopOfOneReceiver() {
    final Workload w = new Workload.SharedReceiver(4, 50, 7);
    assertEquals(7, ((Request.Send) w.next(9, 0, 1, 0)).receiver());
    assertEquals(new Request.PopQueue(2, 4, 7), w.next(9, 1, 2, 1));
  }

  @Test
  void aBodyCarriesItsTagAndOnlyAWellFormedOneIsRead() {
    final byte[] b = Workload.body(12, 345, 20);
    assertEquals("12:345:" + "x".repeat(13), new String(b, StandardCharsets.US_ASCII));
    assertArrayEquals(new long[] {12, 345}, Workload.tag(b, 20));
    assertNull(Workload.tag(b, 21), "a body of another size");
    assertNull(Workload.tag("12:345:xxy".getBytes(StandardCharsets.US_ASCII), 0));
    assertNull(Workload.tag("no tag".getBytes(StandardCharsets.US_ASCII), 0));
    // A tag longer than the size is kept whole.
    assertEquals("1:22222:".length(), Workload.body(1, 22222, 3).length);
  }
}
