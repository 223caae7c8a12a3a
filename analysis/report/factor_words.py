"""Words for the report's tables and texts: a 2^k r design's terms named in words with their
letter beside, whether a share is most of the variation (only a majority is), and the
experiment families, calibration targets and study numbers as the tables name them."""

from __future__ import annotations

from collections.abc import Callable, Mapping

# A share above this is "most of" the variation; below, only "the largest share of" it.
MAJORITY = 0.5


def term_words(term: str, words: Mapping[str, str], letter: Callable[[str], str]) -> str:
    """`servers` -> `the number of servers ($q_{A}$)`; `servers:workers` -> `the interaction
    of the number of servers and the number of workers ($q_{AC}$)`."""
    factors = term.split(":")
    unknown = [f for f in factors if f not in words]
    if unknown:
        raise ValueError(f"no words for factor(s) {unknown}")
    named = [words[f] for f in factors]
    if len(named) == 1:
        text = named[0]
    else:
        listed = ", ".join(named[:-1]) + " and " + named[-1]
        text = f"the interaction of {listed}"
    return f"{text} ($q_{{{letter(term)}}}$)"


def share_case(share: float) -> str:
    """`most` for a majority share of the variation, else `largest` (the largest share)."""
    return "most" if share > MAJORITY else "largest"


# The report's tables name experiment families, calibration targets and study numbers in these
# words; the identifiers stay in the reproduction appendix, where a reader looks for the data.
FAMILY_WORDS = {
    "baseline_direct": "baseline, no middleware",
    "baseline_middleware": "baseline, middlewares",
    "batching_2018": "batching workers",
    "write_throughput": "write throughput",
    "multiget": "multi-GETs",
    "factorial_2018": "2018 factorial",
    "max_throughput_2016": "2016 max. throughput",
    "replication_2016": "2016 replication",
    "writes_2016": "2016 writes",
    "factorial_2016": "2016 factorial",
    "designs_2016": "2016 beside 2018 design",
    "scale_check": "scale check",
    "mq_db_baseline": "2015 database baseline",
    "mq_throughput": "2015 throughput",
    "mq_scale_clients": "2015 scaling clients",
    "mq_scale_workers": "2015 scaling workers",
    "mq_pop_strategy": "2015 pop strategies",
    "mq_factorial": "2015 factorial",
    "mq_stability": "2015 stability",
}

TARGET_WORDS = {
    "server_write_max": "one server's write maximum",
    # The clients' number (seed 004 Table 5); its §3.1.1 prints the middleware's, a little lower.
    "middleware_write_plateau": "one middleware's client-side write plateau",
    "middleware_max_2016": "the 2016 design's maximum throughput",
}

# Parts of a study number's place in workflows/reference*.yaml, and the unit of its value.
REFERENCE_WORDS = {
    "baselines_direct": "without middleware",
    "baselines_middleware": "with middleware",
    "writes": "writes to three servers",
    "multiget": "multi-GET",
    "max_throughput": "2016 maximum-throughput configuration",
    "one_server": "one server",
    "two_servers": "two servers",
    "one_middleware": "one middleware",
    "two_middlewares": "two middlewares",
    "client_x": "client throughput",
    "client_r": "client response time",
    "keys_per_s": "keys per second",
    "response_ms_p50": "median middleware response time",
    "db_baseline": "2015 database baseline",
    "max": "maximum",
    "large": "large messages",
    "small": "small messages",
}
REFERENCE_UNITS = {"client_r": "ms", "response_ms_p50": "ms", "keys_per_s": "keys/s"}


def words(identifier: str, mapping: Mapping[str, str]) -> str:
    """The words for an identifier; one without words reads as its parts."""
    return mapping.get(identifier, identifier.replace("_", " "))


def family_words(family: str) -> str:
    return words(family, FAMILY_WORDS)


def point_words(point: str) -> str:
    """A point's name as the report reads it: `setup=one_server,workload=write-only,
    virtual_clients=32` -> `one server, write-only, 32 virtual clients`."""
    parts = []
    for pair in point.split(","):
        key, _, value = pair.partition("=")
        name = key.replace("_", " ")
        parts.append(f"{value} {name}" if value.isdigit() else value.replace("_", " "))
    return ", ".join(parts)


def reference_words(path: list[str]) -> str:
    """`[baselines_direct, two_servers, read-only]` -> `without middleware, two servers,
    read-only`; a number level reads as its count (`[writes, 8, client_x]`: 8 workers, `1 key`)."""
    count = "workers" if path[:1] == ["writes"] else "keys"
    return ", ".join(
        (f"{part} {count.removesuffix('s') if part == '1' else count}" if part.isdigit()
         else words(part, REFERENCE_WORDS))
        for part in path
    )  # fmt: skip


def reference_unit(path: list[str]) -> str:
    return next((REFERENCE_UNITS[p] for p in reversed(path) if p in REFERENCE_UNITS), "ops/s")
