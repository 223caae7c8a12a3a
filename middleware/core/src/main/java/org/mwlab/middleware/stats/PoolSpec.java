package org.mwlab.middleware.stats;

/**
 * A queue and the threads that serve it, as the statistics name it.
 *
 * @param pool {@code shared} (design 2018), {@code read} or {@code write} (design 2016)
 * @param server index of the memcached server the pool belongs to, -1 for {@code shared}
 * @param address the server's {@code host:port}, null for {@code shared}
 * @param threads threads serving the queue
 * @param firstWorker number of the pool's first thread in workers.csv; the others follow
 */
public record PoolSpec(String pool, int server, String address, int threads, int firstWorker) {}
