"""Reductions whose neutral element is not 0 (a product, `max`, `min`) and tuple-valued ones (argmax, argmin),
compiled by default and explored at sizes no chunk divides (issue 18, "compile anything"): the default lowering
runs on many work-items, padded with the reduction's own neutral element, and equals numpy (argmax and argmin: the
first index of ties); a short search proposes parallel candidates, each passing its check against the reference."""

from pathlib import Path

import numpy as np
import pytest

import lift
from lift import paper
from lift.explore.bandwidth import StreamingBandwidth
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.final_round import FinalRound
from lift.explore.search_strategy import search_for
from lift.ir.program_file import load_program_file
from opencl_device import needs_device

pytestmark = needs_device

SOURCE = '''
import math

import numpy as np

from lift import ArrayType, Float, Int, Reduce, SizeVar, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 4099}


@userfun
def mult(x: Float, y: Float) -> Float:
    return x * y


@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)


@userfun
def minf(x: Float, y: Float) -> Float:
    return min(x, y)


@userfun(associative=True)
def better(a: (Float, Int), b: (Float, Int)) -> (Float, Int):
    if a[0] > b[0] or (a[0] == b[0] and a[1] < b[1]):
        return (a[0], a[1])
    return (b[0], b[1])


@userfun(associative=True)
def fewer(a: (Float, Int), b: (Float, Int)) -> (Float, Int):
    if a[0] < b[0] or (a[0] == b[0] and a[1] < b[1]):
        return (a[0], a[1])
    return (b[0], b[1])


product = fun([ArrayType(Float, N)], lambda x: Reduce(mult, 1.0)(x))
maximum = fun([ArrayType(Float, N)], lambda x: Reduce(maxf, -math.inf)(x))
minimum = fun([ArrayType(Float, N)], lambda x: Reduce(minf, math.inf)(x))
argmax = fun([ArrayType(Float, N), ArrayType(Int, N)], lambda x, i: Reduce(better, (-math.inf, -1))(Zip(x, i)))
argmin = fun([ArrayType(Float, N), ArrayType(Int, N)], lambda x, i: Reduce(fewer, (math.inf, -1))(Zip(x, i)))


def inputs(kernel, sizes, rng):
    """Values near 1 for the product (neither overflowing nor underflowing), few distinct ones (ties) for
    argmax and argmin."""
    n = sizes["N"]
    if kernel == "product":
        return [(1.0 + rng.uniform(-1.0, 1.0, n) / math.sqrt(n)).astype(np.float32)]
    if kernel.startswith("arg"):
        return [rng.integers(0, 100, n).astype(np.float32), np.arange(n, dtype=np.int32)]
    return [rng.standard_normal(n).astype(np.float32)]
'''
FAST = TimingPolicy(min_runs=2, max_runs=3, max_s=0.05)
KNOWN_BANDWIDTH = StreamingBandwidth(copy_gbps=10.0, read_gbps=10.0, launch_ms=0.002, nbytes=0)
SIZES = [17, 4099, 1_000_003]
KERNELS = ["product", "maximum", "minimum", "argmax", "argmin"]


@pytest.fixture(scope="module")
def program_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("neutral") / "neutral.py"
    path.write_text(SOURCE)
    return load_program_file(path)


def _numpy(kernel: str, inputs: list):
    x = inputs[0].astype(np.float64)
    if kernel.startswith("arg"):
        k = int(np.argmax(x) if kernel == "argmax" else np.argmin(x))
        return x[k], k
    return {"product": np.prod, "maximum": np.max, "minimum": np.min}[kernel](x)


def _check(kernel: str, got, inputs: list) -> None:
    expected = _numpy(kernel, inputs)
    if kernel.startswith("arg"):
        value, index = np.asarray(got).item()
        assert (value, index) == expected
    else:
        np.testing.assert_allclose(float(np.asarray(got).ravel()[0]), expected, rtol=2e-3 if kernel == "product" else 0)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_the_default_lowering_runs_on_many_work_items_and_equals_numpy(program_file, kernel, n):
    program = program_file.kernels[kernel]
    compiled = lift.compile(program, lowering="default")
    assert "map-global(reduce-seq(" in paper(compiled.lowered({"N": n}))
    inputs = program_file.namespace["inputs"](kernel, {"N": n}, np.random.default_rng(n))
    _check(kernel, compiled(*inputs), inputs)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("kernel", ["product", "argmax"])
def test_a_short_search_proposes_and_checks_parallel_candidates(program_file, tmp_path, kernel, n):
    """Before, every chunked move failed to pad (a product padded with 0) or to apply (a tuple-valued reduction):
    the search of a product at 4099 proposed the default lowering and the sequential fold, and argmax only the
    sequential fold."""
    program = program_file.kernels[kernel]
    result = explore(program_file, kernel, {"N": n}, search_for(program, {"N": n}), budget_s=240,
                     out_dir=tmp_path / "search", timing=FAST, bandwidth=KNOWN_BANDWIDTH, max_candidates=4,
                     final=FinalRound(top=0), work_group_sizes=(None,), progress=False)
    assert all(r.ok for r in result.ranked), [(r.expression, r.reason) for r in result.ranked if not r.ok]
    parallel = [r for r in result.ranked if "map-global" in r.expression or "map-workgroup" in r.expression]
    assert len(parallel) >= (1 if n == 17 else 3), [r.expression for r in result.ranked]
