package org.mwlab.middleware;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.BindException;
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
    try {
      for (int i = 0; i < nServers; i++) {
        servers.add(Memcached.start());
      }
      final List<String> servers = new ArrayList<>();
      for (final Memcached m : this.servers) {
        servers.add(m.address().toString());
      }
      final List<String> a = new ArrayList<>(List.of("--stats-dir", statsDir.toString()));
      a.addAll(List.of(args));
      final Started started = startMiddleware(a, servers);
      config = started.config();
      middleware = started.middleware();
    } catch (RuntimeException e) {
      this.servers.forEach(Memcached::kill);
      throw e;
    }
  }

  /** A started middleware and its configuration. */
  record Started(Config config, Middleware middleware) {}

  /** An in-process middleware on a free port with {@code args} plus -p and -m. */
  static Started startMiddleware(final List<String> args, final List<String> servers) {
    for (int attempt = 0; ; attempt++) {
      final List<String> a = new ArrayList<>(List.of("-p", Integer.toString(Ports.next())));
      a.addAll(args);
      a.addAll(TestBatching.args(args));
      a.add("-m");
      a.addAll(servers);
      final Config config = Main.parse(a.toArray(String[]::new));
      try {
        return new Started(config, Middleware.start(config));
      } catch (BindException e) {
        if (attempt == 5) {
          throw new UncheckedIOException(e); // the port was taken after it was found free
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  /** The middleware's placement: the key's replica set, primary first. */
  int[] replicas(final String key) {
    return new HashRing(config.servers(), config.replication(), config.virtualNodes())
        .replicas(key.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
  }

  /** The key's primary, the server its design-2016 reads go to. */
  int primary(final String key) {
    return replicas(key)[0];
  }

  TextClient client() {
    return new TextClient(middleware.port());
  }

  @Override
  public void close() {
    try {
      middleware.close();
    } finally {
      servers.forEach(Memcached::kill);
    }
  }
}
