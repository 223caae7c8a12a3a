"""Soaks: long checks that the systems stay right under failure, each judged by an oracle.
`mwlab chaos` (`soak.chaos`) drives the memcached middleware while its servers fail; `mwlab mq
soak` (`soak.mqsoak`) checks SimpleMQ's pops (each message removed once, delivered at most
once). They start their services with `testbed.services` and measure nothing: the testbed
never imports them."""
