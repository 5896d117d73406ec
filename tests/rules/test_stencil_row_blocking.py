"""Stencil row blocks (`lift.rules.stencil_row_blocking`): jacobi2d in blocks of `h` rows, each block's columns of
`h` windows a vector at a time, against the interpreter at random sizes, those that `h` and the column block do not
divide included (Hypothesis), and where the strategy must not apply."""

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import interpret, paper
from lift.rules import RewriteEngine
from lift.rules.column_sums import grid_windows
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.strategy import Focus, outermost

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from jacobi import jacobi2d  # noqa: E402
from stencils import conv2d_high  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _padded_to(length):
    """The largest multiple `pad-map` pads to: the power of two at or above `length`."""
    return 1 << max(length - 1, 1).bit_length()


def _blocked(program, h, block, width, sizes):
    strategy = stencil_row_blocks(h, block, width, sizes["M"] % h != 0, sizes["N"] % block != 0)
    return (outermost(grid_windows, strategy) >> lower_rest >> clean_up)(Focus(program, RewriteEngine(sizes=sizes)))


@SETTINGS
@given(st.sampled_from([2, 4, 8]), st.sampled_from([(8, 8), (16, 4), (16, 16), (32, 8)]), st.integers(1, 9),
       st.integers(1, 24), st.integers(0, 1 << 16))
def test_stencil_row_blocks_of_the_2d_jacobi(h, block_width, m, n, seed):
    """jacobi2d at any size: `h` rows per work-item, blocks of `block` columns, `width` to a vector; rows and columns
    that `h` and `block` do not divide padded (`pad-map`), up to the next power of two."""
    block, width = block_width
    sizes = {"M": m, "N": n}
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, m, n), _rand(rng, 3, 3)
    focus = _blocked(jacobi2d, h, block, width, sizes)
    if h > _padded_to(m) or block > _padded_to(n):
        assert focus is None, "pad-map pads only up to the next power of two"
        return
    assert focus is not None, (h, block, width, sizes)
    text = paper(focus.program)
    assert "map-global[1](" in text and f"split-{h}" in text and f"vectorize-{width}(mult)" in text, text
    assert "map-seq-unroll(λ nb. reduce-seq-unroll(" in text, "each column's windows one after the other, unrolled"
    assert ("pad-to-multiple" in text) == (m % h != 0 or n % block != 0), text
    np.testing.assert_allclose(interpret(focus.program, a, k), interpret(jacobi2d, a, k), rtol=1e-5)


@SETTINGS
@given(st.sampled_from([2, 4]), st.integers(2, 9), st.integers(0, 1 << 16))
def test_stencil_row_blocks_of_a_point_free_convolution(h, m, seed):
    """The 3x3 convolution written `map(map(dot with k))` with no `map(join)` after it: the results are rows of
    scalars."""
    sizes = {"M": m, "N": 16}
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, m, 16), _rand(rng, 3, 3)
    focus = _blocked(conv2d_high, h, 8, 4, sizes)
    if h > _padded_to(m):
        assert focus is None
        return
    assert focus is not None, paper(conv2d_high)
    np.testing.assert_allclose(np.ravel(interpret(focus.program, a, k)), np.ravel(interpret(conv2d_high, a, k)),
                               rtol=1e-5)


def test_stencil_row_blocks_need_blocks_that_divide_unless_padded():
    sizes = {"M": 6, "N": 32}
    engine = RewriteEngine(sizes=sizes)
    assert outermost(grid_windows, stencil_row_blocks(4, 16, 8))(Focus(jacobi2d, engine)) is None
    assert outermost(grid_windows, stencil_row_blocks(2, 16, 8))(Focus(jacobi2d, engine)) is not None
    assert outermost(grid_windows, stencil_row_blocks(4, 16, 8, padded_rows=True))(Focus(jacobi2d, engine)) \
        is not None
    assert outermost(grid_windows, stencil_row_blocks(2, 16, 8, padded_rows=True))(Focus(jacobi2d, engine)) is None, \
        "no padding where h divides the rows"
