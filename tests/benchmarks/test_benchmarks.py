"""The benchmark suite's machinery (`python -m benchmarks`), at tiny sizes: what it checks and what it writes.

No timing is asserted: the suite's numbers are reported by a run, never tested.
"""

import csv
import sys

import numpy as np
import pytest

pytest.importorskip("pyopencl")

from benchmarks.__main__ import main  # noqa: E402
from benchmarks.measure import OK, SKIPPED, WRONG, Contender, HostRun, Unavailable, measure_all  # noqa: E402
from benchmarks.reporting import COLUMNS  # noqa: E402


def test_only_a_correct_contender_is_timed():
    reference = np.arange(8, dtype=np.float32)

    def missing():
        raise Unavailable("not here")

    contenders = [Contender("right", "numpy", lambda: HostRun(lambda: reference.copy())),
                  Contender("wrong", "numpy", lambda: HostRun(lambda: reference + 1)),
                  Contender("missing", "numpy", missing)]
    results, _ = measure_all(contenders, reference, runs=3, log=lambda line: None)
    assert results["right"].status == OK and results["right"].kernel_ms is not None
    assert results["wrong"].status == WRONG and results["wrong"].kernel_ms is None
    assert "differ" in results["wrong"].reason
    assert results["missing"].status == SKIPPED and results["missing"].reason == "not here"


def test_each_round_keeps_its_best_for_contenders_and_yardsticks():
    reference = np.arange(8, dtype=np.float32)
    contenders = [Contender("right", "numpy", lambda: HostRun(lambda: reference.copy()))]
    results, ticks = measure_all(contenders, reference, runs=6, yardsticks={"copy": lambda: HostRun(reference.copy)},
                                 log=lambda line: None, rounds=3)
    for m in (results["right"], ticks["copy"]):
        assert len(m.round_best_ms) == 3
        assert m.best_ms == min(m.round_best_ms) and max(m.round_best_ms) > 0


def test_smoke_run_writes_a_verified_table(device, tmp_path, capsys):
    out, explored = tmp_path / "results", tmp_path / "lift-out"
    assert main(["--smoke", "--runs", "10", "--out", str(out), "--explore-dir", str(explored),
                 "--budget", "60s", "--max-candidates", "2"]) == 0
    with (out / "results.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert tuple(rows[0]) == COLUMNS
    contenders = [r for r in rows if r["kind"] != "streaming bound"]
    assert {r["benchmark"].split()[0] for r in contenders} == {"scal", "asum", "dot", "gemv", "blackscholes", "md"}
    for r in contenders:
        assert r["status"] in ("ok", "skipped"), (r["contender"], r["status"], r["reason"])
        assert (r["verified"] == "True") == (r["status"] == "ok") == (r["kernel_ms"] != "")
    verified = {r["kind"] for r in contenders if r["verified"] == "True"}
    assert {"lift explored", "lift hand-derived", "hand-written", "numpy"} <= verified
    page = (out / "results.md").read_text()
    assert "| benchmark | contender |" in page and "Floors (the explored kernel):" in page
    assert (out / "speedups.png").stat().st_size > 0
    assert (explored / "asum-N262144" / "asum.derivation.json").is_file()
    assert str(out / "results.md") in capsys.readouterr().out


def test_sequences_benchmark_checks_and_times_fused_unfused_and_numpy(device, monkeypatch):
    from benchmarks import bench_sequences as bs
    from lift.ir.program_file import load_program_file

    monkeypatch.setattr(bs, "ROUNDS", 2)
    monkeypatch.setattr(bs, "SEARCH_ROUNDS", 1)
    row = bs.measure("vadd", load_program_file(bs.SEQUENCES), {"K": 4096, "M": 16, "N": 32}, (16,), (1, 4), (0, 1))
    assert (row["fused"]["kernels"], row["unfused"]["kernels"]) == (1, 3)
    assert row["fused"]["width"] in (1, 4) and row["fused"]["local"] in ("-", 1)
    for kind in ("fused", "unfused", "numpy"):
        assert 0 < row[kind]["best"] <= row[kind]["median"]


def test_table4_benchmark_times_each_correct_implementation(device, monkeypatch, capsys):
    from benchmarks import bench_kernel_fusion as bkf

    monkeypatch.setattr(bkf, "ROUNDS", 1)
    monkeypatch.setattr(sys, "argv", ["bench_kernel_fusion", "--only", "axpydot", "--budget", "2", "--chunks", "16",
                                      "--widths", "1", "--size", "K=4096"])
    bkf.main()
    row = capsys.readouterr().out.strip().splitlines()[-1].split("|")[1:-1]
    assert row[0].strip() == "axpydot" and int(row[2]) >= 3  # the DP's, fuse-all's and fuse-nothing's at least
    assert all(float(ms) > 0 for ms in row[6:9])


def test_default_lowering_benchmark_prints_a_ratio_per_program(device, monkeypatch, capsys):
    from benchmarks import bench_default_lowering as bdl

    monkeypatch.setattr(bdl, "PROBLEMS", {"asum": ({"N": 1 << 16}, ("asum_cpu", "asum_intel")),
                                          "matmul": ({"M": 32, "K": 32, "N": 32}, ())})
    monkeypatch.setattr(sys, "argv", ["bench_default_lowering", "--budget", "0", "--rounds", "2", "--repeat", "1"])
    bdl.main()
    lines = capsys.readouterr().out.splitlines()
    asum, matmul = lines[1].split(), lines[2].split()
    assert asum[0] == "asum" and asum[-1] in ("asum_cpu", "asum_intel") and float(asum[4]) > 0
    assert matmul[0] == "matmul" and "no contender" in lines[2]
    vectorised = device.native_vector_width_float > 1
    assert lines[4].startswith("asum: default reduce-seq(add, 0.0) ∘ " + ("asScalar" if vectorised else "join"))


def test_default_stencils_benchmark_checks_each_stencil_against_numpy(device, monkeypatch, capsys):
    from benchmarks import bench_default_stencils as bds

    monkeypatch.setattr(sys, "argv", ["bench_default_stencils", "--size", "13x21", "--grid3d", "3x5x19",
                                      "--rounds", "2"])
    bds.main()
    out = capsys.readouterr().out
    assert "WRONG" not in out
    for name in ("jacobi2d-5pt-clamp", "stencil2d-9pt-mirror", "jacobi3d-7pt-clamp"):
        assert f"{name} " in out and "numpy/lift best" in out
    assert out.count("reduce-seq-unroll") == (3 if device.native_vector_width_float > 1 else 0)


def test_unswitch_checks_benchmark_builds_checks_and_times_both_forms(device, monkeypatch, capsys):
    from benchmarks import bench_unswitch_checks as buc

    monkeypatch.setattr(sys, "argv", ["bench_unswitch_checks", "--only", "conv5x5,jacobi3d_high", "--sizes",
                                      '{"M": 3, "N": 37, "O": 2}', "--builds", "1", "--rounds", "2"])
    buc.main()
    out = capsys.readouterr().out
    assert "WRONG" not in out and out.count("unrolled/rolled: build") == 2, out
    assert out.count("  rolled    run best") == 2 and out.count(" bytes  build best ") == 4, out
