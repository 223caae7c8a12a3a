"""Agreement with GNU Octave's queueing package (qsmm1, qsmmm, qncsmva) to 6 significant digits."""

from __future__ import annotations

import pytest

from analysis.models import mva, queueing
from tests.analysis.conftest import MARK, rel_diff, run_octave
from tests.analysis.networks import CASES

TOL = 1e-6  # relative; 6 significant digits
MM1 = [(125.0, 500.0), (0.9, 1.0), (2840.73, 6750.87), (11469.24, 11582.18), (3.0, 1000.0)]
MMM = [
    (10.0, 3.0, 4),
    (1.0, 1.0, 2),
    (2840.73, 421.93, 16),
    (11251.22, 90.49, 128),
    (50.0, 1.0, 64),
    (6721.23, 421.93, 16),
    (0.5, 2.0, 1),
]


def _vec(values: list[float]) -> str:
    return "[" + " ".join(repr(float(v)) for v in values) + "]"


def _octave_script() -> str:
    lines = ["out = struct();", "out.mm1 = {}; out.mmm = {}; out.mva = {};"]
    for lam, mu in MM1:
        lines.append(f"[U,R,Q,X,p0] = qsmm1({lam!r}, {mu!r}); out.mm1{{end+1}} = [U R Q X p0];")
    for lam, mu, m in MMM:
        lines.append(
            f"[U,R,Q,X,p0,pm] = qsmmm({lam!r}, {mu!r}, {m}); out.mmm{{end+1}} = [U R Q X p0 pm];"
        )
    for _, net, pops, z in CASES:
        s = _vec([st.service_time for st in net.stations])
        v = _vec([st.visits for st in net.stations])
        m = _vec([0 if st.kind == "delay" else st.servers for st in net.stations])
        for n in pops:
            lines.append(
                f"[U,R,Q,X] = qncsmva({n}, {s}, {v}, {m}, {z!r}); "
                "out.mva{end+1} = struct('U', U, 'R', R, 'Q', Q, 'X', X);"
            )
    lines.append(f"printf('{MARK}%s\\n', jsonencode(out));")
    return "\n".join(lines)


@pytest.fixture(scope="module")
def octave() -> dict[str, list]:
    return run_octave(_octave_script())  # type: ignore[return-value]


def _close(ours: float, theirs: float, what: str) -> None:
    if abs(ours) < 1e-12 and abs(theirs) < 1e-12:
        return
    assert rel_diff(ours, theirs) <= TOL, f"{what}: ours {ours!r}, octave {theirs!r}"


def test_mm1_matches_qsmm1(octave) -> None:
    for (lam, mu), (u, r, q, x, p0) in zip(MM1, octave["mm1"], strict=True):
        res = queueing.mm1(lam, mu)
        _close(res.utilization, u, f"U({lam},{mu})")
        _close(res.mean_response_time, r, f"R({lam},{mu})")
        _close(res.mean_jobs_in_system, q, f"Q({lam},{mu})")
        _close(res.arrival_rate, x, f"X({lam},{mu})")
        _close(1 - res.utilization, p0, f"p0({lam},{mu})")


def test_mmm_matches_qsmmm(octave) -> None:
    for (lam, mu, m), (u, r, q, x, p0, pm) in zip(MMM, octave["mmm"], strict=True):
        res = queueing.mmm(lam, mu, m)
        what = f"M/M/{m} λ={lam} μ={mu}"
        _close(res.utilization, u, f"U {what}")
        _close(res.mean_response_time, r, f"R {what}")
        _close(res.mean_jobs_in_system, q, f"Q {what}")
        _close(res.arrival_rate, x, f"X {what}")
        _close(res.p0, p0, f"p0 {what}")
        _close(res.prob_queueing, pm, f"Erlang C {what}")


def test_mva_matches_qncsmva(octave) -> None:
    results = iter(octave["mva"])
    checked = 0
    for name, net, pops, z in CASES:
        for n in pops:
            theirs = next(results)
            ours = mva.solve(net, n, z)
            assert not ours.unstable
            for i, st in enumerate(net.stations):
                r = ours.stations[st.name]
                what = f"{name} N={n} {st.name}"
                _close(r.utilization, _at(theirs["U"], i), f"U {what}")
                _close(r.response_time, _at(theirs["R"], i), f"R {what}")
                _close(r.queue_length, _at(theirs["Q"], i), f"Q {what}")
                _close(r.throughput, _at(theirs["X"], i), f"X {what}")
                checked += 1
    assert checked > 100


def _at(values: float | list[float], i: int) -> float:
    return values if isinstance(values, (int, float)) else values[i]
