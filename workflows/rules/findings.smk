# The report's account of the testbed and of the findings: the machine and the emulation the
# runs used, each family's bottleneck beside the study's, and the studies' findings with a
# verdict each (catalogue: workflows/findings.yaml). Included by paper.smk.

FINDINGS_CATALOGUE = "workflows/findings.yaml"


if not DATASET:

    rule host_environment:
        output:
            json=HOST_JSON,
        log:
            f"{RESULTS}/logs/host_environment.log",
        shell:
            "python3 -m analysis.testbed_summary host > {output.json} 2> {log}"


def _delay_levels():
    """The one-way delays the profile's emulated runs use (0: the baseline without delay)."""
    from mwlab.catalogue import scale_settings
    from common import scalemodel

    scale = scale_settings(None, PROFILE)
    if PROFILE.get("hosts") != "emulated" or not scale["model"]:
        return []
    machines = scalemodel.load_machines()
    delays = {
        d
        for study in machines.studies
        for d in scalemodel.delays_ms(machines, study, float(scale["factor"])).values()
    }
    return [0.0, *sorted(delays)]


DELAY_LEVELS = _delay_levels()
# The delay stage's accuracy, measured where the profile emulates delays (or restored).
DELAY_CHECK = (
    [f"{RESULTS}/delay_check.json"]
    if (DATASET and Path(DATASET, "delay_check.json").is_file()) or (not DATASET and DELAY_LEVELS)
    else []
)


if not DATASET:

    rule delay_check:
        output:
            json=f"{RESULTS}/delay_check.json",
        params:
            levels=",".join(f"{d:g}" for d in DELAY_LEVELS),
        threads: MEASUREMENT_THREADS
        resources:
            testbed=1,
        log:
            f"{RESULTS}/logs/delay_check.log",
        shell:
            "python3 -m mwlab delay-check --out {output.json} --levels {params.levels}"
            " --samples 400 > {log} 2>&1"


rule testbed_section:
    input:
        runs=TESTBED_RUNS,
        host=HOST_JSON,
        provenance=PROVENANCE_JSON,
        code=ANALYSIS_CODE,
        # The delay stage's accuracy at the profile's delays (emulated profiles only).
        delay_check=DELAY_CHECK,
    output:
        table=f"{RESULTS}/paper/testbed-table.tex",
        numbers=f"{RESULTS}/paper/testbed-numbers.tex",
    params:
        delay_check=f"{RESULTS}/delay_check.json",
    log:
        f"{RESULTS}/logs/testbed_section.log",
    script:
        "../scripts/testbed_section.py"


def _point_specs():
    """Each planned point's specification (its first repetition's), family by family: the
    construction rules find there where the scale model was fitted."""
    specs = {}
    for run in PLAN:
        if run.repetition == 1:
            specs.setdefault(run.family, {})[run.point] = {
                k: v for k, v in run.spec.items() if k not in ("name", "repetition")
            }
    return specs


# The calibration's record of what it fitted where, when the build has one.
_CALIBRATION_RECORD = (
    [CALIBRATION_JSON]
    if (DATASET and Path(DATASET, "calibration.json").is_file()) or (not DATASET and CALIBRATION_PLAN)
    else []
)


rule findings:
    input:
        points=family_tables("points"),
        runs=family_tables("runs"),
        histograms=family_tables("histograms"),
        pools=family_tables("pools"),
        windows=family_tables("windows"),
        pool_requests=family_tables("pool_requests"),
        db_counters=family_tables("db_counters"),
        validation=rules.validation.output.table,
        queueing2016=rules.r2016_queueing.output.numbers,
        models2016=rules.r2016_queueing.output.models,
        mva2018=rules.r2018_models.output.mva_data,
        catalogue=FINDINGS_CATALOGUE,
        calibration=_CALIBRATION_RECORD,
        machines=MACHINES_FILE,
        code=ANALYSIS_CODE,
    output:
        bottlenecks=f"{RESULTS}/paper/findings-bottlenecks.tex",
        table2018=f"{RESULTS}/paper/findings-2018.tex",
        table2016=f"{RESULTS}/paper/findings-2016.tex",
        table2015=f"{RESULTS}/paper/findings-2015.tex",
        untested2018=f"{RESULTS}/paper/findings-untested-2018.tex",
        untested2016=f"{RESULTS}/paper/findings-untested-2016.tex",
        untested2015=f"{RESULTS}/paper/findings-untested-2015.tex",
        rules=f"{RESULTS}/paper/findings-rules.tex",
        numbers=f"{RESULTS}/paper/findings-numbers.tex",
        data=f"{RESULTS}/data/findings.json",
    params:
        families=ACTIVE_FAMILIES,
        specs=_point_specs(),
    log:
        f"{RESULTS}/logs/findings.log",
    script:
        "../scripts/findings.py"


FINDINGS_GENERATED = [
    *rules.testbed_section.output,
    *[f for f in rules.findings.output if f != rules.findings.output.data],
]
