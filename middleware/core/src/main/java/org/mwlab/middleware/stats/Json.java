package org.mwlab.middleware.stats;

import java.util.Collection;
import java.util.Map;

/** Minimal JSON writer for the summary (strings, numbers, booleans, lists, maps). */
final class Json {
  private Json() {}

  static String write(final Object v) {
    final StringBuilder sb = new StringBuilder();
    write(sb, v);
    return sb.toString();
  }

  private static void write(final StringBuilder sb, final Object v) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map<?, ?> m) {
      sb.append('{');
      boolean first = true;
      for (final Map.Entry<?, ?> e : m.entrySet()) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        string(sb, String.valueOf(e.getKey()));
        sb.append(": ");
        write(sb, e.getValue());
      }
      sb.append('}');
    } else if (v instanceof Collection<?> c) {
      sb.append('[');
      boolean first = true;
      for (final Object o : c) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        write(sb, o);
      }
      sb.append(']');
    } else {
      string(sb, v.toString());
    }
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
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
        }
      }
    }
    sb.append('"');
  }
}
