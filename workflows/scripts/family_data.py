"""Snakemake script of rule family_data: one family's runs as tidy tables (analysis.family)."""

from pathlib import Path

from analysis.family import build


def main(sm) -> None:  # noqa: ANN001
    results = Path(sm.params.results)
    keys = [str(Path(p).parent.relative_to(results / "runs")) for p in sm.input.runs]
    frames = build(keys, results, dict(sm.params.settings), dict(sm.params.levels))
    for name, frame in frames.items():
        frame.to_parquet(sm.output[name], index=False)


if __name__ == "__main__":
    main(snakemake)  # type: ignore[name-defined]  # noqa: F821
