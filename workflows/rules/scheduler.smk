# Snakemake's scheduler, kept from spending the cores the runs' budgets assume free.
#
# With a job rate limit (Snakemake's default, 100 jobs per second), every pass of the scheduler
# that finds jobs ready but waiting for resources starts a timer that triggers another pass one
# timespan later, and every finished job triggers a pass of its own. So each finished job adds
# a pass per second for as long as jobs wait, as the study's runs wait for the testbed: 35 runs
# into the quick profile's 2015 families, Snakemake ran about 13 passes a second (each an
# ILP solve in a new solver process) and used 0.24-0.49 of a core beside the runs, against
# 0.05 at the start (snakemake/snakemake#2967 reports the same growth). Here at most one such
# timer is pending, and it is a daemon thread, so it never delays Snakemake's exit.
import threading

from snakemake.exceptions import WorkflowError
from snakemake.scheduling.job_scheduler import JobScheduler


def _one_pending_reevaluation(self, delay):
    if getattr(self, "_reevaluation_pending", False):
        return

    def fire():
        self._reevaluation_pending = False
        self._open_jobs.release()

    self._reevaluation_pending = True
    timer = threading.Timer(delay, fire)
    timer.daemon = True
    timer.start()


if not hasattr(JobScheduler, "_schedule_reevalutation"):
    raise WorkflowError(
        "this Snakemake has no JobScheduler._schedule_reevalutation: "
        "workflows/rules/scheduler.smk was written for 9.17; install requirements.lock"
    )
JobScheduler._schedule_reevalutation = _one_pending_reevaluation
