# The boundary between measuring and analysing (analysis/dataset.py). Measured, the
# provenance is computed from the runs; rebuilt from a reference dataset (config `dataset`),
# rule restore verifies the dataset against its manifest and copies in everything the
# analysis would otherwise read from the measurement, so no measurement rule exists.


# Files the analysis reads from a measurement, with the optional ones this profile has.
MEASURED = [f"{RESULTS}/{name}" for name in datasets.measured_files(ACTIVE_FAMILIES)]
if CALIBRATION_PLAN:
    MEASURED.append(CALIBRATION_JSON)
MEASURED += DELAY_CHECK
# ssh profiles: what preflight found on each study's machines.
MEASURED += PREFLIGHT_RECORDS


# `mwlab measure`'s target: everything a dataset archives from this measurement (or piece).
rule measured:
    input:
        MEASURED,
        PROVENANCE_JSON,


if DATASET:

    rule restore:
        input:
            manifest=f"{DATASET}/{datasets.MANIFEST}",
        output:
            MEASURED,
        params:
            names=[path[len(RESULTS) + 1 :] for path in MEASURED],
        log:
            f"{RESULTS}/logs/restore.log",
        run:
            datasets.restore(Path(DATASET), Path(RESULTS), params.names)

else:

    rule provenance:
        input:
            validation=f"{RESULTS}/data/validation.parquet",
            manifests=family_tables("manifests"),
            host=HOST_JSON,
            preflight=PREFLIGHT_RECORDS,
            catalogue=CATALOGUE_FILE,
            code=ANALYSIS_CODE,
        output:
            json=PROVENANCE_JSON,
            # What a dataset archived from these results plans its analysis with: the
            # effective configuration and the catalogue.
            study=f"{RESULTS}/{datasets.STUDY}",
            catalogue=f"{RESULTS}/{datasets.CATALOGUE}",
        params:
            measurement=f"{RESULTS}/measurement.json",
        log:
            f"{RESULTS}/logs/provenance.log",
        script:
            "../scripts/provenance.py"


rule provenance_numbers:
    input:
        json=PROVENANCE_JSON,
        code=ANALYSIS_CODE,
    output:
        tex=f"{RESULTS}/paper/provenance.tex",
    params:
        source=f"the reference dataset {DATASET}" if DATASET else f"a measurement in {RESULTS}",
    log:
        f"{RESULTS}/logs/provenance_numbers.log",
    script:
        "../scripts/provenance_numbers.py"


def _reference():
    """The reference dataset a new measurement is compared with: config `reference`, else the
    newest dataset of this profile; none when rebuilding from a dataset."""
    if DATASET:
        return None
    if config.get("reference"):
        return config["reference"]
    try:
        found = datasets.latest(datasets.ROOT, prefer=config["profile"])
    except datasets.DatasetError:
        return None
    return str(found) if found.parent.name == config["profile"] else None


REFERENCE = _reference()
AGREEMENT = (
    [f"{RESULTS}/paper/agreement.tex", f"{RESULTS}/paper/agreement-numbers.tex"]
    if REFERENCE
    else []
)

if REFERENCE:

    rule agreement:
        input:
            points=family_tables("points"),
            findings=f"{RESULTS}/data/findings.json",
            reference=f"{REFERENCE}/{datasets.MANIFEST}",
            code=ANALYSIS_CODE,
        output:
            table=AGREEMENT[0],
            numbers=AGREEMENT[1],
        params:
            reference=REFERENCE,
            families=ACTIVE_FAMILIES,
        log:
            f"{RESULTS}/logs/agreement.log",
        script:
            "../scripts/agreement.py"
