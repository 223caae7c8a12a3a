"""The stages of a run, in the order it passes them; run.json times each (`stage_s`)."""

# The stages of `mwlab run`; its test hooks (`--fail-at`, `--pause-at`) name one of them.
RUN_STAGES = (
    "layout",
    "linkcap",
    "linkdelay",
    "servers",
    "populate",
    "middlewares",
    "clients",
    "stop",
    "teardown",
)
# Every timed stage in run order: a series also splits each step's output out of its
# topology's after the clients ("split"), and every run collects its output last ("collect").
_AFTER_CLIENTS = RUN_STAGES.index("clients") + 1
TIMED_STAGES = (*RUN_STAGES[:_AFTER_CLIENTS], "split", *RUN_STAGES[_AFTER_CLIENTS:], "collect")
