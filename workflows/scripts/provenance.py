"""Snakemake script of rule provenance: where, when and from which code the profile's data was
measured (analysis/provenance.py; on ssh machines, each study's preflight record), with the
configuration and catalogue a dataset archived
from these results plans its analysis with."""

import json
import shutil
from pathlib import Path

import pandas as pd
import yaml

from analysis import dataset, provenance

# Configuration keys that name this checkout's folders or this piece, not the profile.
LOCAL_KEYS = ("results", "dataset", "catalogue", "piece", "onto")


def main(sm) -> None:  # noqa: ANN001
    # The effective configuration, without the keys that name this checkout's folders.
    study = {k: v for k, v in sm.config.items() if k not in LOCAL_KEYS}
    Path(sm.output.study).write_text(yaml.safe_dump(study, sort_keys=True))
    shutil.copyfile(sm.input.catalogue, sm.output.catalogue)
    record_path = Path(sm.params.measurement)
    record = json.loads(record_path.read_text()) if record_path.exists() else None
    doc = provenance.compute(
        profile=str(sm.config["profile"]),
        validation=pd.read_parquet(sm.input.validation),
        manifests=pd.concat(
            [f for f in map(pd.read_parquet, sm.input.manifests) if not f.empty], ignore_index=True
        ),
        machine=json.loads(Path(sm.input.host).read_text()),
        measurement=record,
        hashes={
            "study_sha256": dataset.sha256(Path(sm.output.study)),
            "catalogue_sha256": dataset.sha256(Path(sm.output.catalogue)),
        },
    )
    if sm.input.preflight:
        # Measured on real machines: each study's, as preflight recorded them.
        doc["machines_by_study"] = {
            Path(p).parent.name: json.loads(Path(p).read_text()) for p in sm.input.preflight
        }
    Path(sm.output.json).write_text(json.dumps(doc, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
