"""jacobi2d of `examples/jacobi.py` in stencil row blocks (`lift.rules.stencil_row_blocking`): the kernels against
numpy on the device at sizes that the blocks of rows and of columns do and do not divide (padded), the vectors
clear of the grid's edges read unchecked, and under oclgrind's race and uninitialised-memory checks."""

import sys
from pathlib import Path

import numpy as np
import pytest

from lift import paper, python_source
from lift.opencl_gen.compiled import compile
from lift.rules import RewriteEngine
from lift.rules.column_sums import grid_windows
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.strategy import Focus, outermost

from opencl_device import needs_device, needs_oclgrind, run_under_oclgrind

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
from jacobi import inputs, jacobi2d  # noqa: E402


def _numpy(a, k):
    p = np.pad(a.astype(np.float64), 1, mode="edge")
    return sum(k[i, j] * p[i:i + a.shape[0], j:j + a.shape[1]] for i in range(3) for j in range(3))


def _lowered(h, block, width, sizes):
    strategy = stencil_row_blocks(h, block, width, sizes["M"] % h != 0, sizes["N"] % block != 0)
    focus = (outermost(grid_windows, strategy) >> lower_rest >> clean_up)(Focus(jacobi2d, RewriteEngine(sizes=sizes)))
    assert focus is not None, f"row blocks ({h}, {block}, {width}) do not apply at {sizes}"
    return focus.program


CASES = [
    (2, 16, 16, {"M": 6, "N": 32}),
    (4, 64, 8, {"M": 8, "N": 128}),
    (8, 16, 8, {"M": 16, "N": 16}),  # one block of columns: both clamped edges in one work-item
    # padded rows (the last block's rows past the grid tested on their own), padded columns, both
    (4, 16, 16, {"M": 7, "N": 32}),
    (2, 32, 8, {"M": 4, "N": 19}),
    (8, 64, 16, {"M": 13, "N": 41}),
]


@needs_device
@pytest.mark.parametrize("h, block, width, sizes", CASES)
def test_stencil_row_blocks_agree_with_numpy(h, block, width, sizes):
    program = _lowered(h, block, width, sizes)
    a, k = inputs("jacobi2d", {"L": 1, **sizes}, np.random.default_rng(h + block + width))
    compiled = compile(program, sizes=sizes)
    assert "/* the clamped vector reads in bounds */" in compiled.source, "the vectors clear of the edges unchecked"
    np.testing.assert_allclose(np.reshape(compiled(a, k), a.shape), _numpy(a, k), rtol=1e-5, atol=1e-6,
                               err_msg=paper(program))


@needs_oclgrind
@pytest.mark.parametrize("h, block, width, sizes", [CASES[0], CASES[3], CASES[4]])
def test_stencil_row_blocks_under_oclgrind(tmp_path, h, block, width, sizes):
    program = _lowered(h, block, width, sizes)
    path = tmp_path / "lowered.py"
    header = f"import sys\nsys.path.insert(0, {str(EXAMPLES)!r})\nfrom lift import *\nfrom blas import add, mult\n"
    path.write_text(f"{header}lowered = {python_source(program)}\n")
    a, k = inputs("jacobi2d", {"L": 1, **sizes}, np.random.default_rng(3))
    (got,) = run_under_oclgrind(path, "lowered", sizes, [a, k], tmp_path, unoptimised=True)
    np.testing.assert_allclose(np.reshape(got, a.shape), _numpy(a, k), rtol=1e-5, atol=1e-6)
