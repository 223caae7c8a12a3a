package org.mwlab.loadgen;

/** Request types memtier reports separately. */
public enum OpType {
  SET,
  GET
}
