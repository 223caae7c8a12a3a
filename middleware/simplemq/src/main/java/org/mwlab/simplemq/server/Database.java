package org.mwlab.simplemq.server;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.mwlab.simplemq.protocol.LeasedMessage;
import org.mwlab.simplemq.protocol.Message;
import org.mwlab.simplemq.protocol.Reply;
import org.mwlab.simplemq.protocol.Request;
import org.mwlab.simplemq.protocol.Status;

/**
 * One persistent JDBC connection and the calls of SimpleMQ's procedures over it (the SQL files
 * in the module's {@code sql/}). Each call is its own transaction (autocommit), or a group of
 * calls one transaction ({@link #executeGroup}), under READ COMMITTED, PostgreSQL's default, set
 * explicitly. Not thread-safe: one per worker.
 */
public final class Database implements AutoCloseable {

  private static final String COLUMNS = "id, sender_id, receiver_id, queue_id, sent_at, body";

  private final String url;
  private Connection connection;
  private PreparedStatement addClient;
  private PreparedStatement deleteClient;
  private PreparedStatement addQueue;
  private PreparedStatement deleteQueue;
  private PreparedStatement addMessage;
  private PreparedStatement addMessageOnce;
  private PreparedStatement peekQueue;
  private PreparedStatement popQueue;
  private PreparedStatement popMessage;
  private PreparedStatement queryQueues;
  private PreparedStatement readQueue;
  private PreparedStatement ackMessage;
  private PreparedStatement nackMessage;
  private PreparedStatement addMessages;
  private PreparedStatement popQueueBatch;
  private PreparedStatement ackMessages;
  private PreparedStatement queueMetrics;

  /** Opens the connection; {@code url} is a pgjdbc URL with user and options. */
  public Database(final String url) throws SQLException {
    this.url = url;
    open();
  }

  private void open() throws SQLException {
    connection = DriverManager.getConnection(url);
    connection.setAutoCommit(true);
    connection.setTransactionIsolation(Connection.TRANSACTION_READ_COMMITTED);
    addClient = connection.prepareStatement("SELECT add_client(?)");
    deleteClient = connection.prepareStatement("SELECT delete_client(?)");
    addQueue = connection.prepareStatement("SELECT add_queue()");
    deleteQueue = connection.prepareStatement("SELECT delete_queue(?)");
    addMessage = connection.prepareStatement("SELECT add_message(?, ?, ?, ?, ?)");
    addMessageOnce = connection.prepareStatement("SELECT add_message_once(?, ?, ?, ?, ?, ?)");
    peekQueue = connection.prepareStatement("SELECT " + COLUMNS + " FROM peek_queue(?, ?)");
    popQueue = connection.prepareStatement("SELECT " + COLUMNS + " FROM pop_queue(?, ?)");
    popMessage = connection.prepareStatement("SELECT " + COLUMNS + " FROM pop_message(?, ?)");
    queryQueues = connection.prepareStatement("SELECT q FROM query_queues(?) AS q");
    readQueue = connection.prepareStatement(
        "SELECT " + COLUMNS + ", deliveries FROM read_queue(?, ?, ?, ?)");
    ackMessage = connection.prepareStatement("SELECT ack_message(?)");
    nackMessage = connection.prepareStatement("SELECT nack_message(?)");
    addMessages = connection.prepareStatement("SELECT id FROM add_messages(?, ?, ?, ?, ?) AS id");
    popQueueBatch =
        connection.prepareStatement("SELECT " + COLUMNS + " FROM pop_queue_batch(?, ?, ?)");
    ackMessages = connection.prepareStatement("SELECT id FROM ack_messages(?) AS id");
    queueMetrics = connection.prepareStatement(
        "SELECT visible, leased, dead, oldest_age_ms FROM queue_metrics(?)");
  }

  /**
   * Runs one request and gives its reply. A database error becomes an error reply; a broken
   * connection is opened again for the next request (this one's outcome is then unknown, and
   * its reply says so).
   */
  public Reply execute(final Request request) {
    final int id = request.requestId();
    if (connection == null) {
      try {
        open();
      } catch (final SQLException e) {
        connection = null;
        return new Reply.Failure(id, Status.DATABASE, "no database connection: " + firstLine(
            e.getMessage()));
      }
    }
    try {
      return call(request);
    } catch (final SQLException e) {
      final String state = e.getSQLState() == null ? "" : e.getSQLState();
      if (state.startsWith("08") || isClosed()) {
        reconnect();
        return new Reply.Failure(id, Status.DATABASE,
            "the database connection broke; the request's outcome is unknown: " + e.getMessage());
      }
      return new Reply.Failure(id, status(state), firstLine(e.getMessage()));
    }
  }

  /**
   * Runs several requests in one transaction and gives their replies, in order, once it
   * committed (group commit). A request's error (a message to an unknown client, say) undoes
   * the whole transaction, and each request then runs alone, as {@link #execute} runs it, so
   * every reply means what it means without a group. A broken connection leaves every
   * request's outcome unknown, and each reply says so.
   */
  public List<Reply> executeGroup(final List<Request> requests) {
    if (connection == null) {
      return requests.stream().map(this::execute).toList();
    }
    final List<Reply> replies = new ArrayList<>(requests.size());
    try {
      connection.setAutoCommit(false);
      for (final Request r : requests) {
        replies.add(call(r));
      }
      connection.commit();
      connection.setAutoCommit(true);
      return replies;
    } catch (final SQLException e) {
      final String state = e.getSQLState() == null ? "" : e.getSQLState();
      if (state.startsWith("08") || isClosed()) {
        reconnect();
        return requests.stream()
            .<Reply>map(r -> new Reply.Failure(r.requestId(), Status.DATABASE,
                "the database connection broke during a group commit of " + requests.size()
                    + " requests; this one's outcome is unknown: " + e.getMessage()))
            .toList();
      }
      try {
        connection.rollback();
        connection.setAutoCommit(true);
      } catch (final SQLException again) {
        reconnect();
      }
      return requests.stream().map(this::execute).toList();
    }
  }

  private Reply call(final Request request) throws SQLException {
    if (request instanceof Request.Waiting w) {
      return call(w.now());
    }
    final int id = request.requestId();
    if (request instanceof Request.CreateClient r) {
      addClient.setInt(1, r.client());
      run(addClient);
      return new Reply.Done(id);
    } else if (request instanceof Request.DeleteClient r) {
      deleteClient.setInt(1, r.client());
      run(deleteClient);
      return new Reply.Done(id);
    } else if (request instanceof Request.CreateQueue) {
      try (ResultSet rs = addQueue.executeQuery()) {
        rs.next();
        return new Reply.Created(id, rs.getInt(1));
      }
    } else if (request instanceof Request.DeleteQueue r) {
      deleteQueue.setInt(1, r.queue());
      run(deleteQueue);
      return new Reply.Done(id);
    } else if (request instanceof Request.Sending r) {
      final PreparedStatement s = r instanceof Request.SendOnce once ? addMessageOnce : addMessage;
      s.setInt(1, r.sender());
      s.setInt(2, r.receiver());
      s.setInt(3, r.queue());
      s.setObject(4, timestamp(r.sentAtMicros()));
      s.setString(5, new String(r.body(), StandardCharsets.US_ASCII));
      if (r instanceof Request.SendOnce once) {
        s.setLong(6, once.key());
      }
      try (ResultSet rs = s.executeQuery()) {
        rs.next();
        return new Reply.Created(id, rs.getLong(1));
      }
    } else if (request instanceof Request.PeekQueue r) {
      return message(id, peekQueue, r.queue(), r.receiver());
    } else if (request instanceof Request.PopQueue r) {
      return message(id, popQueue, r.queue(), r.receiver());
    } else if (request instanceof Request.PopFromSender r) {
      return message(id, popMessage, r.sender(), r.receiver());
    } else if (request instanceof Request.QueryQueues r) {
      queryQueues.setInt(1, r.client());
      final List<Integer> found = new ArrayList<>();
      try (ResultSet rs = queryQueues.executeQuery()) {
        while (rs.next()) {
          found.add(rs.getInt(1));
        }
      }
      return new Reply.Queues(id, found.stream().mapToInt(Integer::intValue).toArray());
    } else if (request instanceof Request.Read r) {
      readQueue.setInt(1, r.queue());
      readQueue.setInt(2, r.receiver());
      readQueue.setInt(3, r.visibilityMs());
      readQueue.setInt(4, r.max());
      final List<LeasedMessage> leased = new ArrayList<>();
      try (ResultSet rs = readQueue.executeQuery()) {
        while (rs.next()) {
          leased.add(new LeasedMessage(row(rs), rs.getInt(7)));
        }
      }
      return leased.isEmpty() ? new Reply.Empty(id) : new Reply.Leased(id, leased);
    } else if (request instanceof Request.Ack r) {
      return settled(id, ackMessage, r.message());
    } else if (request instanceof Request.Nack r) {
      return settled(id, nackMessage, r.message());
    }
    return batch(request);
  }

  /** The batch operations: one statement each, so one transaction. */
  private Reply batch(final Request request) throws SQLException {
    final int id = request.requestId();
    if (request instanceof Request.SendBatch r) {
      addMessages.setInt(1, r.sender());
      addMessages.setInt(2, r.receiver());
      addMessages.setInt(3, r.queue());
      addMessages.setObject(4, timestamp(r.sentAtMicros()));
      addMessages.setArray(5, connection.createArrayOf("text",
          r.bodies().stream().map(b -> new String(b, StandardCharsets.US_ASCII)).toArray()));
      // Drawn in the bodies' order, so in increasing order.
      return new Reply.Ids(id, longs(addMessages).sorted().toArray());
    } else if (request instanceof Request.PopBatch r) {
      popQueueBatch.setInt(1, r.queue());
      popQueueBatch.setInt(2, r.receiver());
      popQueueBatch.setInt(3, r.max());
      final List<Message> popped = new ArrayList<>();
      try (ResultSet rs = popQueueBatch.executeQuery()) {
        while (rs.next()) {
          popped.add(row(rs));
        }
      }
      popped.sort(java.util.Comparator.comparingLong(Message::id));
      return popped.isEmpty() ? new Reply.Empty(id) : new Reply.Popped(id, popped);
    } else if (request instanceof Request.QueueMetrics r) {
      queueMetrics.setInt(1, r.queue());
      try (ResultSet rs = queueMetrics.executeQuery()) {
        rs.next();
        return new Reply.Metrics(id, rs.getLong(1), rs.getLong(2), rs.getLong(3), rs.getLong(4));
      }
    } else if (request instanceof Request.AckBatch r) {
      ackMessages.setArray(1, connection.createArrayOf("bigint",
          java.util.Arrays.stream(r.messages()).boxed().toArray()));
      return new Reply.Ids(id, longs(ackMessages).sorted().toArray());
    }
    throw new IllegalStateException("no call for " + request.op());
  }

  private static java.util.stream.LongStream longs(final PreparedStatement s)
      throws SQLException {
    final java.util.stream.LongStream.Builder ids = java.util.stream.LongStream.builder();
    try (ResultSet rs = s.executeQuery()) {
      while (rs.next()) {
        ids.add(rs.getLong(1));
      }
    }
    return ids.build();
  }

  private static void run(final PreparedStatement s) throws SQLException {
    try (ResultSet rs = s.executeQuery()) {
      rs.next();
    }
  }

  private static Reply message(final int id, final PreparedStatement s, final int a, final int b)
      throws SQLException {
    s.setInt(1, a);
    s.setInt(2, b);
    try (ResultSet rs = s.executeQuery()) {
      if (!rs.next()) {
        return new Reply.Empty(id);
      }
      return new Reply.Delivered(id, row(rs));
    }
  }

  /** The message of the current row, in {@link #COLUMNS}' order. */
  private static Message row(final ResultSet rs) throws SQLException {
    final OffsetDateTime sent = rs.getObject(5, OffsetDateTime.class);
    return new Message(
        rs.getLong(1),
        rs.getInt(2),
        rs.getInt(3),
        rs.getInt(4),
        ChronoUnit.MICROS.between(Instant.EPOCH, sent.toInstant()),
        rs.getString(6).getBytes(StandardCharsets.US_ASCII));
  }

  /** An ack or nack: done, or no lease of that id (the procedure's false). */
  private static Reply settled(final int id, final PreparedStatement s, final long message)
      throws SQLException {
    s.setLong(1, message);
    try (ResultSet rs = s.executeQuery()) {
      rs.next();
      return rs.getBoolean(1) ? new Reply.Done(id) : new Reply.NotLeased(id);
    }
  }

  static OffsetDateTime timestamp(final long micros) {
    return Instant.EPOCH.plus(micros, ChronoUnit.MICROS).atOffset(ZoneOffset.UTC);
  }

  /** The reply status of a PostgreSQL error code (SQLSTATE). */
  static Status status(final String sqlState) {
    return switch (sqlState) {
      case "23503" -> Status.UNKNOWN_REFERENCE; // foreign_key_violation
      case "23505" -> Status.CONFLICT; // unique_violation
      case "P0002" -> Status.NOT_FOUND; // no_data_found
      default -> Status.DATABASE;
    };
  }

  private static String firstLine(final String message) {
    if (message == null) {
      return "database error";
    }
    final int nl = message.indexOf('\n');
    return nl < 0 ? message : message.substring(0, nl);
  }

  private boolean isClosed() {
    try {
      return connection == null || connection.isClosed();
    } catch (final SQLException e) {
      return true;
    }
  }

  private void reconnect() {
    try {
      if (connection != null) {
        connection.close();
      }
    } catch (final SQLException ignored) {
      // It is broken already.
    }
    try {
      open();
    } catch (final SQLException e) {
      // The next request tries again, and reports the failure if it fails again.
      connection = null;
    }
  }

  @Override
  public void close() throws SQLException {
    if (connection != null) {
      connection.close();
    }
  }
}
