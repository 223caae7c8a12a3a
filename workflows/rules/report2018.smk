# The 2018 study's sections: baselines, writes, multi-gets, 2^k r designs, queueing models.
REPORT_2018 = []
