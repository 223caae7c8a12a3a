# The 2016 study's sections: maximum throughput, replication, writes and their models.
REPORT_2016 = []
