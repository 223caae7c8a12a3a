package org.mwlab.loadgen;

import java.util.EnumMap;
import java.util.Map;
import org.mwlab.common.load.TypeStats;

/** Statistics of one worker thread, merged into one for the report. */
public final class RunStats {

  private final Map<OpType, TypeStats> byType = new EnumMap<>(OpType.class);

  public RunStats() {
    for (final OpType t : OpType.values()) {
      byType.put(t, new TypeStats());
    }
  }

  public TypeStats of(final OpType type) {
    return byType.get(type);
  }

  public void add(final RunStats other) {
    add(other, 0);
  }

  /** Adds {@code other}, whose window 0 is window {@code windowOffset} of this one. */
  public void add(final RunStats other, final int windowOffset) {
    for (final OpType t : OpType.values()) {
      byType.get(t).add(other.byType.get(t), windowOffset);
    }
  }
}
