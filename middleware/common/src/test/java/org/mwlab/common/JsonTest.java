package org.mwlab.common;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class JsonTest {
  private static Map<String, Object> sample() {
    final Map<String, Object> inner = new LinkedHashMap<>();
    inner.put("n", 3);
    inner.put("ratio", 0.5);
    inner.put("nan", Double.NaN);
    final Map<String, Object> m = new LinkedHashMap<>();
    m.put("name", "a \"quoted\"\\path\n\t\u0001");
    m.put("list", List.of(1, "x", true));
    m.put("inner", inner);
    m.put("empty", Map.of());
    m.put("none", null);
    m.put("servers", Arrays.asList("h:1", null));
    return m;
  }

  @Test
  void inlineEscapesStringsAndKeepsMapOrderOnOneLine() {
    assertEquals(
        "{\"name\": \"a \\\"quoted\\\"\\\\path\\n\\t\\u0001\", \"list\": [1, \"x\", true],"
            + " \"inner\": {\"n\": 3, \"ratio\": 0.500, \"nan\": null}, \"empty\": {},"
            + " \"none\": null, \"servers\": [\"h:1\", null]}",
        Json.inline(sample()));
  }

  @Test
  void indentedPutsEachMapEntryOnItsOwnLine() {
    assertEquals(
        "{\n"
            + "  \"name\": \"a \\\"quoted\\\"\\\\path\\n\\t\\u0001\",\n"
            + "  \"list\": [1, \"x\", true],\n"
            + "  \"inner\": {\n"
            + "    \"n\": 3,\n"
            + "    \"ratio\": 0.500,\n"
            + "    \"nan\": null\n"
            + "  },\n"
            + "  \"empty\": {},\n"
            + "  \"none\": null,\n"
            + "  \"servers\": [\"h:1\", null]\n"
            + "}",
        Json.indented(sample()));
  }
}
