package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Real memcached servers plus an in-process middleware in front of them. */
final class Cluster implements AutoCloseable {
  final List<Memcached> servers = new ArrayList<>();
  final Middleware middleware;
  final Config config;

  /** {@code args} are extra middleware flags; -p, -m and --stats-dir are filled in. */
  Cluster(final int nServers, final Path statsDir, final String... args) {
    for (int i = 0; i < nServers; i++) {
      servers.add(new Memcached(Ports.next()));
    }
    final List<String> a = new ArrayList<>(List.of("-p", Integer.toString(Ports.next())));
    a.add("--stats-dir");
    a.add(statsDir.toString());
    a.addAll(List.of(args));
    a.add("-m");
    for (final Memcached m : servers) {
      a.add(m.address().toString());
    }
    config = Main.parse(a.toArray(String[]::new));
    try {
      middleware = Middleware.start(config);
    } catch (IOException e) {
      servers.forEach(Memcached::kill);
      throw new UncheckedIOException(e);
    }
  }

  TextClient client() {
    return new TextClient(middleware.port());
  }

  /** Index of a server in {@link #servers} by its ring position (same order as -m). */
  HashRing ring() {
    return new HashRing(config.servers(), config.replication(), config.virtualNodes());
  }

  @Override
  public void close() {
    try {
      if (middleware != null) {
        middleware.close();
      }
    } finally {
      servers.forEach(Memcached::kill);
    }
  }
}
