"""The services the testbed starts, each written once: memcached, the memcached middleware,
SimpleMQ and PostgreSQL. A module per concern holds a service's command line and how to tell
it is ready; `ports` the port checks they share, `local` the starting and stopping of
processes on this machine outside any host. Where a process runs (a local, namespace or ssh
host) stays `testbed.hosts`' business; `pghost` adds what PostgreSQL needs of a host (its
binaries, its user, its cluster's directory)."""
