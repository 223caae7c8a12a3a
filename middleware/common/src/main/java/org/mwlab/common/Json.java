package org.mwlab.common;

import java.util.Collection;
import java.util.Locale;
import java.util.Map;

/**
 * A small JSON writer for what the tools write: maps (in their iteration order), collections,
 * strings, numbers, booleans and null. Doubles get three decimals; NaN and infinities, which JSON
 * lacks, become null.
 */
public final class Json {
  private Json() {}

  /** On one line: {@code {"a": 1, "b": [1, 2]}}. */
  public static String inline(final Object value) {
    final StringBuilder sb = new StringBuilder();
    write(sb, value, -1);
    return sb.toString();
  }

  /** Maps one entry per line, indented by two spaces per level; lists stay on one line. */
  public static String indented(final Object value) {
    final StringBuilder sb = new StringBuilder();
    write(sb, value, 0);
    return sb.toString();
  }

  /** {@code depth} < 0: inline. */
  private static void write(final StringBuilder sb, final Object value, final int depth) {
    if (value == null) {
      sb.append("null");
    } else if (value instanceof Map<?, ?> map) {
      map(sb, map, depth);
    } else if (value instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (final Object o : c) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        write(sb, o, depth < 0 ? -1 : depth + 1);
      }
      sb.append(']');
    } else if (value instanceof Double || value instanceof Float) {
      final double d = ((Number) value).doubleValue();
      sb.append(Double.isFinite(d) ? String.format(Locale.ROOT, "%.3f", d) : "null");
    } else if (value instanceof Number || value instanceof Boolean) {
      sb.append(value);
    } else {
      string(sb, value.toString());
    }
  }

  private static void map(final StringBuilder sb, final Map<?, ?> map, final int depth) {
    if (map.isEmpty()) {
      sb.append("{}");
      return;
    }
    sb.append(depth < 0 ? "{" : "{\n");
    int i = 0;
    for (final Map.Entry<?, ?> e : map.entrySet()) {
      if (depth >= 0) {
        sb.append("  ".repeat(depth + 1));
      }
      string(sb, String.valueOf(e.getKey()));
      sb.append(": ");
      write(sb, e.getValue(), depth < 0 ? -1 : depth + 1);
      if (++i < map.size()) {
        sb.append(depth < 0 ? ", " : ",\n");
      } else if (depth >= 0) {
        sb.append('\n');
      }
    }
    if (depth >= 0) {
      sb.append("  ".repeat(depth));
    }
    sb.append('}');
  }

  private static void string(final StringBuilder sb, final String s) {
    sb.append('"');
    for (int i = 0; i < s.length(); i++) {
      final char c = s.charAt(i);
      switch (c) {
        case '"' -> sb.append("\\\"");
        case '\\' -> sb.append("\\\\");
        case '\n' -> sb.append("\\n");
        case '\r' -> sb.append("\\r");
        case '\t' -> sb.append("\\t");
        default -> {
          if (c < 0x20) {
            sb.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
