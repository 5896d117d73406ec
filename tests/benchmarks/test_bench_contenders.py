"""The contenders benchmark (`benchmarks.bench_contenders`) in its quick mode: every contender's output agrees
with numpy's, or the contender is skipped for a missing package or program. No timing is asserted."""

import pytest

pytest.importorskip("pyopencl")

from benchmarks.bench_contenders import LIFT, NUMPY, main  # noqa: E402
from benchmarks.contender_cases import CASES  # noqa: E402
from benchmarks.measure import OK, SKIPPED  # noqa: E402


def _check(results) -> None:
    for r in results:
        for name, m in r.measurements.items():
            assert m.status in (OK, SKIPPED), (r.label, name, m.status, m.reason)
            if m.status == SKIPPED:
                assert "not installed" in m.reason or m.reason.startswith("no ") or "takes" in m.reason, \
                    (r.label, name, m.reason)
            else:
                assert 0 < m.best_ms <= m.kernel_ms
        assert r.measurements[LIFT].ok and r.measurements[NUMPY].ok, r.label
        assert r.copy.best_ms > 0
        for floor, ratio in r.floors:
            assert ratio is None or ratio > 0


def test_every_contender_agrees_with_numpy(device, monkeypatch):
    monkeypatch.setenv("LIFT_TUNING_DB", "off")  # lift's kernel: the default lowering
    lines = []
    results = main(["--quick", "--budget", "0", "--runs", "5"], log=lines.append)
    assert [r.instance.case for r in results] == list(CASES)
    _check(results)
    verified = {kind for r in results for name, kind in r.kinds.items() if r.measurements[name].ok}
    assert {LIFT, "lift hand-derived", NUMPY, "hand-written OpenCL"} <= verified
    md = next(r for r in results if r.instance.case.name == "md")
    assert md.measurements["hand-written float8 lanes"].ok  # MD's atoms in lanes, neighbours gathered per lane
    assert any(line.startswith("| program |") for line in lines)


def test_explored_winner_is_checked_and_timed(device, tmp_path):
    lines = []
    results = main(["--quick", "--only", "asum", "--budget", "30", "--max-candidates", "2", "--runs", "5"],
                   log=lines.append)
    _check(results)
    assert results[0].note.startswith("explored: ")
    assert any(line.startswith("  floor: lift ≥ 0.95x lift hand-derived: ") for line in lines)
