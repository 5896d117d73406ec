"""2-D stencils walked down column strips (`lift.rules.column_strips`): jacobi2d of `examples/jacobi.py` and the
5-point `jacobi2d5_high` of `examples/stencils.py`, against numpy on the device at sizes that the strips and the
blocks of rows do and do not divide (odd sizes: rows extended, a whole strip per work-item), the window a row's
shifted vectors in private variables, and under oclgrind's race and uninitialised-memory checks."""

import sys
from pathlib import Path

import numpy as np
import pytest

from lift import paper, python_source
from lift.opencl_gen.compiled import compile
from lift.rules import RewriteEngine
from lift.rules.column_strips import column_strip_walk
from lift.rules.column_sums import grid_windows
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import Focus, outermost

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from jacobi import inputs, jacobi2d  # noqa: E402
from stencils import jacobi2d5_high  # noqa: E402

PROGRAMS = {"jacobi2d": jacobi2d, "jacobi2d5_high": jacobi2d5_high}


def _numpy(a, k):
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    return sum(k[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3))


def _walked(name, w, h, sizes):
    focus = (outermost(grid_windows, column_strip_walk(w, -sizes["N"] % w, h)) >> lower_rest >> clean_up)(
        Focus(PROGRAMS[name], RewriteEngine(sizes=sizes)))
    assert focus is not None, f"the column strip walk ({w}, {h}) does not apply at {sizes}"
    return focus.program


def _inputs(name, sizes, seed):
    a, k = inputs("jacobi2d", {"L": 1, **sizes}, np.random.default_rng(seed))
    if name == "jacobi2d5_high":
        return [a], np.array([[0, 1, 0], [1, 1, 1], [0, 1, 0]], np.float32) * np.float32(0.2)
    return [a, k], k


CASES = [
    ("jacobi2d", 8, 0, {"M": 61, "N": 67}),  # odd: rows extended to strips of 8, one strip per work-item
    ("jacobi2d5_high", 16, 0, {"M": 61, "N": 67}),
    ("jacobi2d", 16, 0, {"M": 5, "N": 17}),  # two strips: both clamped edges, the second mostly extension
    ("jacobi2d", 8, 4, {"M": 64, "N": 67}),  # blocks of 4 rows on dimension 1
    ("jacobi2d5_high", 16, 8, {"M": 64, "N": 64}),
    ("jacobi2d5_high", 4, 2, {"M": 6, "N": 9}),
]


@needs_device
@pytest.mark.parametrize("name, w, h, sizes", CASES)
def test_column_strip_walks_agree_with_numpy(name, w, h, sizes):
    program = _walked(name, w, h, sizes)
    args, k = _inputs(name, sizes, w + h)
    compiled = compile(program, sizes=sizes)
    assert f"float{w} pmem_" in compiled.source, "the window holds vectors: each row's three shifted vectors"
    assert compiled.source.count(f"vload{w}(") >= 3, compiled.source
    np.testing.assert_allclose(np.reshape(compiled(*args), args[0].shape), _numpy(args[0], k), rtol=1e-5,
                               atol=1e-6, err_msg=paper(program))


@needs_oclgrind
@pytest.mark.parametrize("name, w, h, sizes", [CASES[2], CASES[5]])
def test_column_strip_walks_under_oclgrind(tmp_path, name, w, h, sizes):
    program = _walked(name, w, h, sizes)
    path = tmp_path / "lowered.py"
    header = (f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nfrom lift import *\nfrom blas import add, mult\n"
              "from stencils import jacobi5\n")
    path.write_text(f"{header}lowered = {python_source(program)}\n")
    args, k = _inputs(name, sizes, 3)
    (got,) = run_under_oclgrind(path, "lowered", sizes, args, tmp_path, unoptimised=True)
    np.testing.assert_allclose(np.reshape(got, args[0].shape), _numpy(args[0], k), rtol=1e-5, atol=1e-6)
