"""Analysis: parsing, aggregation, validation, factorial designs and queueing models."""
