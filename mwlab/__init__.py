"""mwlab: the command-line front end of the memcached middleware study."""
