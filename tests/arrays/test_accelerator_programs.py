"""Accelerator's benchmark programs (`benchmarks/bench_arrays.py`) written with lift arrays agree with the
same functions on numpy arrays, on the device; the benchmark's own run checks and prints at a tiny size."""

import sys
from pathlib import Path

import numpy as np
import pytest

import lift

ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks import bench_arrays  # noqa: E402


@pytest.mark.parametrize("name", sorted(bench_arrays.PROGRAMS))
def test_program_agrees_with_numpy(name, device):
    inputs = bench_arrays._inputs(name, 0.0005, np.random.default_rng(3))
    f = bench_arrays.PROGRAMS[name]
    want = np.asarray(f(*inputs))
    with lift.config(placement="device", device=device):
        got = f(*(lift.asarray(a) for a in inputs)).get()
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-3 * max(float(np.abs(want).max()), 1.0))


def test_benchmark_prints_ratios(device, capsys):
    rows = bench_arrays.main(["--scale", "0.0005", "--only", "saxpy,chain_sum,blur"])
    out = capsys.readouterr().out
    assert [r["program"] for r in rows] == ["saxpy", "chain_sum", "blur"]
    assert "streaming bound" in out and "np/kern" in out


def test_call_overhead_benchmark_prints_the_evaluation_through_lift_arrays(device, capsys):
    from benchmarks import bench_call_overhead

    bench_call_overhead.main(["--size", "4096", "--calls", "2"])
    out = capsys.readouterr().out
    assert "lift arrays, on device" in out and "call, device arrays" in out
