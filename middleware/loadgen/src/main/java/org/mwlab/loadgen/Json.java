package org.mwlab.loadgen;

import java.util.List;
import java.util.Locale;
import java.util.Map;

/** Serialises maps, lists, strings, numbers and booleans as indented JSON. */
final class Json {

  private Json() {}

  static String write(final Object value) {
    final StringBuilder sb = new StringBuilder();
    write(sb, value, 0);
    sb.append('\n');
    return sb.toString();
  }

  private static void write(final StringBuilder sb, final Object value, final int depth) {
    if (value == null) {
      sb.append("null");
    } else if (value instanceof Map<?, ?> map) {
      if (map.isEmpty()) {
        sb.append("{}");
        return;
      }
      sb.append("{\n");
      int i = 0;
      for (final Map.Entry<?, ?> e : map.entrySet()) {
        indent(sb, depth + 1);
        string(sb, String.valueOf(e.getKey()));
        sb.append(": ");
        write(sb, e.getValue(), depth + 1);
        sb.append(++i < map.size() ? ",\n" : "\n");
      }
      indent(sb, depth);
      sb.append('}');
    } else if (value instanceof List<?> list) {
      sb.append('[');
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) {
          sb.append(", ");
        }
        write(sb, list.get(i), depth + 1);
      }
      sb.append(']');
    } else if (value instanceof Double d) {
      sb.append(d.isNaN() || d.isInfinite() ? "null" : String.format(Locale.ROOT, "%.3f", d));
    } else if (value instanceof Number || value instanceof Boolean) {
      sb.append(value);
    } else {
      string(sb, value.toString());
    }
  }

  private static void indent(final StringBuilder sb, final int depth) {
    sb.append("  ".repeat(depth));
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
