"""The 2018 study (seeds 002 and 004): one module per section of its report (baselines,
batching, writes, multi-GETs, the 2^k r designs, the queueing models) and the concepts they
show, with the two reports' values beside ours."""
