"""The contenders benchmark (`benchmarks.bench_contenders`) in its quick mode: every contender's output agrees
with numpy's, or the contender is skipped for a missing package or program. No timing is asserted."""

import pytest

from lift.errors import LiftError

pytest.importorskip("pyopencl")

from benchmarks.bench_contenders import LIFT, NUMPY, CaseResult, main  # noqa: E402
from benchmarks.contender_cases import CASES, STREAMING, Instance  # noqa: E402
from benchmarks.measure import OK, SKIPPED, Measurement  # noqa: E402

ROUNDS = 5


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
        assert r.copy.best_ms > 0 and len(r.copy.round_best_ms) == ROUNDS
        assert len(r.round_shares(r.lift)) == ROUNDS
        for floor, ratio in r.floors:
            assert ratio is None or ratio > 0


def test_every_contender_agrees_with_numpy(device, monkeypatch):
    monkeypatch.setenv("LIFT_TUNING_DB", "off")  # lift's kernel: the default lowering
    lines = []
    results = main(["--quick", "--budget", "0", "--runs", "5", "--rounds", str(ROUNDS)], log=lines.append)
    assert [r.instance.case for r in results] == list(CASES)
    _check(results)
    verified = {kind for r in results for name, kind in r.kinds.items() if r.measurements[name].ok}
    assert {LIFT, "lift hand-derived", NUMPY, "hand-written OpenCL"} <= verified
    md = next(r for r in results if r.instance.case.name == "md")
    assert md.measurements["hand-written float8 lanes"].ok  # MD's atoms in lanes, neighbours gathered per lane
    assert any(line.startswith("| program |") for line in lines)


def test_explored_winner_is_checked_and_timed(device, tmp_path):
    lines = []
    results = main(["--quick", "--only", "asum", "--budget", "30", "--max-candidates", "2", "--runs", "5",
                    "--rounds", str(ROUNDS)], log=lines.append)
    _check(results)
    assert results[0].note.startswith("explored: ")
    assert any(line.startswith("  floor: lift ≥ 0.95x lift hand-derived: ") for line in lines)


def test_a_share_of_each_round_compares_that_rounds_bests():
    case = next(c for c in CASES if c.name == "jacobi2d")
    inst = Instance.make(case, case.quick)
    lift = Measurement(OK, 2.0, 2.0, best_ms=1.0, round_best_ms=(1.0, 4.0, 2.0))
    copy = Measurement(OK, 1.5, 1.5, best_ms=0.5, round_best_ms=(0.5, 1.0, 3.0))
    r = CaseResult("jacobi2d", inst, {LIFT: LIFT}, {LIFT: lift}, copy, inst.input_bytes, "")
    rate = inst.useful_bytes / (2 * inst.input_bytes)
    assert r.round_shares(lift) == pytest.approx([rate * 0.5, rate * 0.25, rate * 1.5])
    assert r.streaming_share(lift) == pytest.approx(rate * 0.5)
    assert r.floor_ratio(STREAMING, medians=True) == pytest.approx(rate * 0.75)


def test_rounds_must_be_positive():
    with pytest.raises(LiftError, match="--rounds"):
        main(["--quick", "--only", "asum", "--rounds", "0"])
