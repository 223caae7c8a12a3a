package org.mwlab.simplemq.client;

import java.sql.SQLException;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;
import org.mwlab.simplemq.server.Database;

/** The database baseline: the client calls the procedures over its own JDBC connection. */
public final class DatabaseTransport implements Transport {

  private final Database database;

  public DatabaseTransport(final String url) throws SQLException {
    this.database = new Database(url);
  }

  @Override
  public Reply call(final Request request) {
    return database.execute(request);
  }

  @Override
  public void close() throws java.io.IOException {
    try {
      database.close();
    } catch (final SQLException e) {
      throw new java.io.IOException(e);
    }
  }
}
