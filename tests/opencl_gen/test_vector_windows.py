"""The Jacobi stencils of `examples/jacobi.py` lowered with vectors of windows (`lift.rules.column_sums.vector_windows`,
`vector_grid`, over windows padded to a multiple of the block where it does not divide their number): the kernels
against numpy (`np.pad` and slicing) on the device at sizes that are and are not multiples of the block and of 16,
and under oclgrind's race and uninitialised-memory checks, unaligned vector loads and clamped edges included."""

import sys
from pathlib import Path

import numpy as np
import pytest

from lift import paper, python_source
from lift.opencl_gen.compiled import compile
from lift.rules import RewriteEngine
from lift.rules.column_sums import grid_windows, vector_grid, vector_windows, windows
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import Focus, outermost

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind, vector_lowering

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from jacobi import inputs, jacobi1d, jacobi2d  # noqa: E402


def _numpy(kernel, a, k):
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    if kernel == "jacobi1d":
        return sum(k[i] * p[i:i + a.size] for i in range(3))
    return sum(k[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3))


def _lowered(kernel, block, width, sizes):
    program, place, strategy = ((jacobi1d, windows, vector_windows) if kernel == "jacobi1d"
                                else (jacobi2d, grid_windows, vector_grid))
    length = sizes["L" if kernel == "jacobi1d" else "N"]
    focus = (outermost(place, strategy(block, width, padded=length % block != 0)) >> lower_rest >> clean_up)(
        Focus(program, RewriteEngine(sizes=sizes)))
    assert focus is not None, f"vector windows ({block}, {width}) do not apply at {sizes}"
    return focus.program


CASES = [
    ("jacobi1d", 8, 8, {"L": 40}),  # 40 windows: 5 blocks of one float8, no multiple of 16
    ("jacobi1d", 64, 16, {"L": 192}),
    ("jacobi1d", 64, 4, {"L": 64}),  # one block: both clamped edges in one work-item
    ("jacobi2d", 8, 8, {"M": 5, "N": 24}),
    ("jacobi2d", 16, 16, {"M": 3, "N": 16}),
    ("jacobi2d", 64, 8, {"M": 7, "N": 128}),
    # the windows padded to a multiple of the block (`pad-map`): the vectors past the last window test that once
    ("jacobi1d", 16, 8, {"L": 37}),
    ("jacobi1d", 64, 16, {"L": 101}),
    ("jacobi2d", 16, 16, {"M": 5, "N": 37}),
    ("jacobi2d", 64, 16, {"M": 3, "N": 41}),
    ("jacobi2d", 32, 8, {"M": 4, "N": 19}),
]


@needs_device
@pytest.mark.parametrize("kernel, block, width, sizes", CASES)
def test_vector_windows_agree_with_numpy(kernel, block, width, sizes):
    program = _lowered(kernel, block, width, sizes)
    a, k = inputs(kernel, {"L": 1, "M": 1, "N": 1, **sizes}, np.random.default_rng(block + width))
    compiled = compile(program, sizes=sizes)
    assert "/* the clamped vector reads in bounds */" in compiled.source, "the vectors clear of the edges unchecked"
    got = compiled(a, k)
    np.testing.assert_allclose(np.reshape(got, a.shape), _numpy(kernel, a, k), rtol=1e-5, atol=1e-6,
                               err_msg=paper(program))


@needs_oclgrind
@pytest.mark.parametrize("kernel, block, width, sizes", [CASES[0], CASES[2], CASES[3], CASES[6], CASES[8]])
def test_vector_windows_under_oclgrind(tmp_path, kernel, block, width, sizes):
    program = _lowered(kernel, block, width, sizes)
    path = tmp_path / "lowered.py"
    header = f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nfrom lift import *\nfrom blas import add, mult\n"
    path.write_text(f"{header}lowered = {python_source(program)}\n")
    a, k = inputs(kernel, {"L": 1, "M": 1, "N": 1, **sizes}, np.random.default_rng(3))
    (got,) = run_under_oclgrind(path, "lowered", sizes, [a, k], tmp_path, unoptimised=True)
    np.testing.assert_allclose(np.reshape(got, a.shape), _numpy(kernel, a, k), rtol=1e-5, atol=1e-6)


@needs_device
@pytest.mark.parametrize("n", [101, 1009])
def test_a_moving_average_is_a_stencil_of_vector_windows_then_a_map(examples, n):
    """A 31-point moving average as a new user writes it, `map(λw. map(λs. s / 31)(reduce(+, 0)(w)))(slide(31, 1)(
    pad(15, 15, clamp)(x)))` (`examples/moving_average.py`): the window's fold of the window itself (no map before
    it) is a loop over vectors of windows (31 elements: longer than `MAX_UNROLLED_WINDOW`), and the division after
    it is a map of its own on global work-items
    (`map-fission`) at a prime size; the kernels compute numpy's means."""
    from lift import compile as lift_compile

    pf = examples["moving_average"]
    compiled = lift_compile(pf.kernels["moving_average"], sizes={"N": n},
                            lowering=vector_lowering(pf.kernels["moving_average"], {"N": n}))
    lowered = paper(compiled.lowered())
    assert "map-seq-unswitch(reduce-seq(" in lowered and "asVector-16" in lowered, lowered
    assert lowered.startswith("join ∘ take-(N) ∘ map-global(map-seq(λ s. mul_float("), lowered
    (x,) = pf.inputs("moving_average", {"N": n}, seed=5)
    np.testing.assert_allclose(compiled(x), pf.namespace["reference"](x), rtol=1e-5, atol=1e-6)
