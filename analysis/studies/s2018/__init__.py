"""The 2018 study (seeds 002 and 004): its reference values beside ours, multi-GETs, the write
experiment's open models and the closed network of the baselines with middlewares."""
