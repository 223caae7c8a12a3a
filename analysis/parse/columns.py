"""Column names that more than one reader writes, in their order."""

# What names one window of one request type: every per-window table starts with these.
WINDOW = ["window", "start_ms", "end_ms", "type", "keys", "count", "throughput_ops"]
# The response-time percentiles a window reports.
PERCENTILES = ["response_us_p50", "response_us_p90", "response_us_p99"]
# What names the run and the side a row of a tidy table comes from.
RUN = ["run", "point", "repetition", "side"]
