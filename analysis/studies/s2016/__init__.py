"""The 2016 study (seeds 000 and 001): the report of each of its families (maximum throughput,
replication, writes, the factorial design, the grid on both designs, the interactive law),
the design's M/M/m and MVA models, queue and server times per part, response-time
percentiles, seed 001's tables, and the section's numbers as macros."""
