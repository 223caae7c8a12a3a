package org.mwlab.simplemq.protocol;

/**
 * A message as a read delivers it: leased until its visibility timeout passes.
 *
 * @param deliveries the reads that delivered it, this one included: above 1, a redelivery
 */
public record LeasedMessage(Message message, int deliveries) {}
