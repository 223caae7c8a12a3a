"""The paper build fails on undefined references and visible overfull boxes only."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location(
    "check_latex_log", ROOT / "workflows/scripts/check_latex_log.py"
)
assert spec is not None and spec.loader is not None
check = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check)


def test_flags_undefined_references_and_wide_boxes() -> None:
    log = "\n".join(
        [
            "LaTeX Warning: Reference `tab:missing' on page 3 undefined on input line 12.",
            r"Overfull \hbox (12.11589pt too wide) in paragraph at lines 48--50",
            r"Overfull \hbox (0.4pt too wide) in paragraph at lines 10--11",
            "Underfull \\hbox (badness 10000) in paragraph at lines 1--2",
        ]
    )
    found = check.problems(log)
    assert len(found) == 2
    assert "tab:missing" in found[0]
    assert "12.11589pt" in found[1]


def test_clean_log_passes(tmp_path: Path) -> None:
    log = tmp_path / "report.log"
    log.write_text("Output written on report.pdf (22 pages).\n")
    assert check.main([str(log)]) == 0
    assert check.main([str(tmp_path / "absent.log")]) == 2
