package org.mwlab.middleware;

/** The request kinds the middleware forwards; names as they appear in the statistics. */
public enum RequestType {
  SET("set"),
  GET("get"),
  MULTIGET("multiget");

  private final String label;

  RequestType(final String label) {
    this.label = label;
  }

  public String label() {
    return label;
  }
}
