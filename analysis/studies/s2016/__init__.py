"""The 2016 study (seeds 000 and 001): the design's M/M/m and MVA models, its grid on both
designs, queue and server times per part, response-time percentiles and seed 001's tables."""
