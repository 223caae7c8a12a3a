package org.mwlab.loadgen;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reads the JSON the generator writes (RFC 8259), for assertions: objects keep their key order. */
final class JsonReader {

  private final String s;
  private int i;

  private JsonReader(final String s) {
    this.s = s;
  }

  static Object parse(final String text) {
    final JsonReader r = new JsonReader(text);
    final Object v = r.value();
    r.space();
    if (r.i != r.s.length()) {
      throw r.error("trailing text");
    }
    return v;
  }

  private Object value() {
    space();
    if (i >= s.length()) {
      throw error("unexpected end");
    }
    final char c = s.charAt(i);
    return switch (c) {
      case '{' -> object();
      case '[' -> array();
      case '"' -> string();
      case 't' -> literal("true", Boolean.TRUE);
      case 'f' -> literal("false", Boolean.FALSE);
      case 'n' -> literal("null", null);
      default -> number();
    };
  }

  private Map<String, Object> object() {
    final Map<String, Object> m = new LinkedHashMap<>();
    i++;
    space();
    if (peek() == '}') {
      i++;
      return m;
    }
    while (true) {
      space();
      final String key = string();
      space();
      expect(':');
      m.put(key, value());
      space();
      if (peek() == ',') {
        i++;
      } else {
        expect('}');
        return m;
      }
    }
  }

  private List<Object> array() {
    final List<Object> l = new ArrayList<>();
    i++;
    space();
    if (peek() == ']') {
      i++;
      return l;
    }
    while (true) {
      l.add(value());
      space();
      if (peek() == ',') {
        i++;
      } else {
        expect(']');
        return l;
      }
    }
  }

  private String string() {
    expect('"');
    final StringBuilder sb = new StringBuilder();
    while (true) {
      final char c = next();
      if (c == '"') {
        return sb.toString();
      }
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      final char e = next();
      switch (e) {
        case '"', '\\', '/' -> sb.append(e);
        case 'b' -> sb.append('\b');
        case 'f' -> sb.append('\f');
        case 'n' -> sb.append('\n');
        case 'r' -> sb.append('\r');
        case 't' -> sb.append('\t');
        case 'u' -> {
          sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
        }
        default -> throw error("bad escape");
      }
    }
  }

  /** Integers as Long, the rest as Double. */
  private Number number() {
    final int start = i;
    while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
      i++;
    }
    final String t = s.substring(start, i);
    if (t.isEmpty()) {
      throw error("unexpected character");
    }
    return t.matches("-?\\d+") ? (Number) Long.parseLong(t) : (Number) Double.parseDouble(t);
  }

  private Object literal(final String word, final Object v) {
    if (!s.startsWith(word, i)) {
      throw error("expected " + word);
    }
    i += word.length();
    return v;
  }

  private void space() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
      i++;
    }
  }

  private char peek() {
    return i < s.length() ? s.charAt(i) : '\0';
  }

  private char next() {
    if (i >= s.length()) {
      throw error("unexpected end");
    }
    return s.charAt(i++);
  }

  private void expect(final char c) {
    if (next() != c) {
      throw error("expected '" + c + "'");
    }
  }

  private IllegalArgumentException error(final String what) {
    return new IllegalArgumentException(what + " at offset " + i);
  }
}
