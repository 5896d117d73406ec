"""Stencils as the stencil paper writes them (Hagedorn et al., CGO 2018): a user function of each window, reading it
at its indices (`jacobi5(join(nb))`). `vect-n` of such a function (`lift.rules.vectorize_function`: its windows
arrays of vectors, one window per lane), `vectorize-windows` over its windows, `private-argument` of the vectorised
call, the stencil strategies built on them (`vector_windows`, `stencil_row_blocks`) and the default lowering: against
the interpreter at random sizes, widths, functions and data (Hypothesis), on the device against numpy at odd sizes,
and where they must not apply."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import (ArrayType, Bool, Float, Id, Join, Map, MapGlb, MapSeq, Pad, SizeVar, Slide, ToPrivate, fun,
                  interpret, paper, userfun)
from lift.opencl_gen.kernels import generate
from lift.rules import RewriteEngine
from lift.rules.column_sums import grid_windows, user_function_windows, vector_windows, windows
from lift.rules.default_lowering import clean_up, lower, lower_rest
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.strategy import Focus, outermost
from lift.rules.vectorize_function import NotVectorisable, vectorize

from opencl_device import needs_device

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from stencils import jacobi2d5_high, jacobi3, jacobi5  # noqa: E402
from test_window_vectorization import _applied  # noqa: E402

SETTINGS = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
L = SizeVar("L")


@userfun
def weighted3(w: ArrayType(Float, 3), k: ArrayType(Float, 3)) -> Float:
    return w[0] * k[0] + w[1] * k[1] + w[2] * k[2]


@userfun
def box9(w: ArrayType(Float, 9)) -> Float:
    s = 0.0
    for i in range(9):
        s = s + w[i] * (i + 1)
    return s


@userfun
def positive(w: ArrayType(Bool, 3)) -> Float:
    return 1.0 if w[1] else 0.0


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


# 1-D: windows of a clamped array; 2-D: a row of 3x3 neighbourhoods read flat (`join`)
ROWS = {
    "jacobi3": (lambda m: [ArrayType(Float, m)],
                lambda x: Map(lambda w: jacobi3(w))(Slide(3, 1)(Pad(1, 1, "clamp")(x))),
                lambda rng, m: [_rand(rng, m)]),
    "weighted3": (lambda m: [ArrayType(Float, m), ArrayType(Float, 3)],
                  lambda x, k: Map(lambda w: weighted3(w, k))(Slide(3, 1)(Pad(1, 1, "clamp")(x))),
                  lambda rng, m: [_rand(rng, m), _rand(rng, 3)]),
    "jacobi5": (lambda m: [ArrayType(ArrayType(ArrayType(Float, 3), 3), m)],
                lambda x: Map(lambda nb: jacobi5(Join()(nb)))(x),
                lambda rng, m: [_rand(rng, m, 3, 3)]),
    "box9": (lambda m: [ArrayType(ArrayType(ArrayType(Float, 3), 3), m)],
             lambda x: Map(lambda nb: box9(Join()(nb)))(x),
             lambda rng, m: [_rand(rng, m, 3, 3)]),
}


@SETTINGS
@given(st.sampled_from(sorted(ROWS)), st.sampled_from([2, 4, 8, 16]), st.integers(1, 3), st.integers(0, 1 << 16))
def test_vectorize_windows_of_a_user_function_computes_every_window_in_its_lane(kind, n, vectors, seed):
    """`map(λw. u(w))` → `asScalar ∘ map(λw. vectorize-n(u)(w))` over windows of vectors: `u` reads lane `j`'s
    window in lane `j` (an array argument that is not a window, `weighted3`'s weights, the same in every lane)."""
    types, body, inputs = ROWS[kind]
    m = n * vectors
    program = fun(types(m), body)
    xs = inputs(np.random.default_rng(seed), m)
    new = _applied(program, "vectorize-windows", n=n)
    assert f"vectorize-{n}({kind})" in paper(new) and f"asVector-{n}" in paper(new), paper(new)
    np.testing.assert_allclose(interpret(new, *xs), interpret(program, *xs), rtol=1e-6)


def test_vectorize_windows_after_the_private_copy_copies_vectors():
    """`vect-n(toPrivate(map-seq(id)))` = `toPrivate(map-seq(vectorize-n(id)))`: the windows' private copy, made
    before the windows are vectorised, copies vectors."""
    program = fun([ArrayType(ArrayType(ArrayType(Float, 3), 3), 8)],
                  lambda x: MapGlb(lambda nb: jacobi5(ToPrivate(MapSeq(Id()))(Join()(nb))))(x))
    new = _applied(program, "vectorize-windows", n=4)
    assert "vectorize-4(jacobi5) ∘ toPrivate(map-seq(vectorize-4(id)))" in paper(new), paper(new)
    x = _rand(np.random.default_rng(0), 8, 3, 3)
    np.testing.assert_allclose(interpret(new, x), interpret(program, x), rtol=1e-6)


def test_vect_n_of_a_user_function_of_arrays():
    assert paper(vectorize(4, jacobi5, arrays=True)) == "vectorize-4(jacobi5)"
    with pytest.raises(NotVectorisable, match="jacobi5"):  # arrays of vectors only where asked for
        vectorize(4, jacobi5)
    with pytest.raises(NotVectorisable, match="positive"):  # there are no vectors of bool
        vectorize(4, positive, arrays=True)


def _lowered(program, strategy, sizes):
    focus = (strategy >> lower_rest >> clean_up)(Focus(program, RewriteEngine(sizes=sizes)))
    return None if focus is None else focus.program


def _padded_to(length):
    return 1 << max(length - 1, 1).bit_length()


@SETTINGS
@given(st.sampled_from([(8, 8), (16, 4), (16, 16), (64, 16)]), st.integers(1, 70), st.integers(0, 1 << 16))
def test_vector_windows_of_a_user_function_copy_each_window_of_vectors_to_private_memory(block_width, length, seed):
    """A 1-D stencil `map(λw. jacobi3(w))` in blocks of `block` windows, `width` to a vector, on global work-items:
    the vectorised call's window copied to private memory (`private-argument` of `vectorize-n(jacobi3)`), the
    windows padded where the block does not divide them."""
    block, width = block_width
    program = fun([ArrayType(Float, L)], ROWS["jacobi3"][1])
    a = _rand(np.random.default_rng(seed), length)
    new = _lowered(program, outermost(user_function_windows, vector_windows(block, width, padded=length % block != 0)),
                   {"L": length})
    if length % block and block >= 2 * length:
        assert new is None, "pad-map pads only up to the next power of two"
        return
    text = paper(new)
    assert f"vectorize-{width}(jacobi3) ∘ toPrivate(map-seq-unroll(id))" in text and "map-global(" in text, text
    np.testing.assert_allclose(interpret(new, a), interpret(program, a), rtol=1e-6)


@SETTINGS
@given(st.sampled_from([2, 4]), st.sampled_from([(8, 8), (16, 16), (32, 8)]), st.integers(1, 9), st.integers(1, 40),
       st.integers(0, 1 << 16))
def test_stencil_row_blocks_of_the_user_function_jacobi(h, block_width, m, n, seed):
    """jacobi2d5 (`map(map(λnb. jacobi5(join(nb))))`) in blocks of `h` rows, each block's columns of `h` windows a
    vector at a time, each window copied to private memory, at any size (padded where `h`, `block` do not divide)."""
    block, width = block_width
    sizes = {"M": m, "N": n}
    a = _rand(np.random.default_rng(seed), m, n)
    new = _lowered(jacobi2d5_high, outermost(grid_windows, stencil_row_blocks(h, block, width, m % h != 0,
                                                                              n % block != 0)), sizes)
    if h > _padded_to(m) or block > _padded_to(n):
        assert new is None, "pad-map pads only up to the next power of two"
        return
    text = paper(new)
    assert f"map-seq-unroll(vectorize-{width}(jacobi5) ∘ toPrivate(map-seq-unroll(id)) ∘ join)" in text, text
    np.testing.assert_allclose(interpret(new, a), interpret(jacobi2d5_high, a), rtol=1e-6)


def _jacobi2d5_numpy(a):
    p = np.pad(a, 1, mode="edge")
    return np.float32(0.2) * (p[:-2, 1:-1] + p[1:-1, :-2] + p[1:-1, 1:-1] + p[1:-1, 2:] + p[2:, 1:-1])


def test_the_windows_of_a_user_function_are_no_fold_s_and_long_rows_are_no_windows():
    row = fun([ArrayType(ArrayType(ArrayType(Float, 3), 3), 8)], ROWS["jacobi5"][1])
    ctx = Focus(row, RewriteEngine(), "body").ctx
    assert user_function_windows(ctx) and not windows(ctx)

    @userfun
    def first(r: ArrayType(Float, 100)) -> Float:
        return r[0]

    long_rows = fun([ArrayType(ArrayType(Float, 100), 8)], lambda x: Map(lambda r: first(r))(x))
    assert not user_function_windows(Focus(long_rows, RewriteEngine(), "body").ctx), "a row of 100 is no window"


def test_the_default_lowering_computes_a_user_function_of_each_window_in_vector_windows():
    """jacobi2d5 at 2048²: 64 windows per work-item, 16 to a float16, each window's private copy of vectors read once
    its bounds are tested (`map-seq-unswitch`: the copy's unrolled steps read at constant offsets)."""
    sizes = {"M": 2048, "N": 2048}
    lowered = lower(jacobi2d5_high, sizes)
    text = paper(lowered)
    assert "map-seq-unswitch(vectorize-16(jacobi5) ∘ toPrivate(map-seq-unroll(id)) ∘ join)" in text, text
    source = generate(lowered, "jacobi2d5", sizes).source
    assert "float16 jacobi5_v16_lanes_private(private const float16* w)" in source, source
    fast = source[source.index("the clamped vector reads in bounds"):]
    fast = fast[:fast.index("vstore16")]
    assert fast.count("vload16(") == 9 and " ? " not in fast and "#pragma unroll" not in fast, fast


@needs_device
@pytest.mark.parametrize("m, n", [(1, 1), (3, 17), (17, 23), (101, 99), (33, 130)])
def test_the_user_function_jacobi_runs_at_odd_sizes(m, n):
    a = np.random.default_rng(m * n).uniform(-1, 1, (m, n)).astype(np.float32)
    np.testing.assert_allclose(lift.compile(jacobi2d5_high, lowering="default")(a), _jacobi2d5_numpy(a), rtol=1e-5,
                               atol=1e-6)


@needs_device
@pytest.mark.parametrize("m, n", [(6, 37), (16, 64)])
def test_row_blocks_of_the_user_function_jacobi_run_on_the_device(m, n):
    a = np.random.default_rng(m + n).uniform(-1, 1, (m, n)).astype(np.float32)
    sizes = {"M": m, "N": n}
    lowered = _lowered(jacobi2d5_high, outermost(grid_windows, stencil_row_blocks(2, 16, 16, m % 2 != 0, n % 16 != 0)),
                       sizes)
    np.testing.assert_allclose(lift.compile(lowered)(a), _jacobi2d5_numpy(a), rtol=1e-5, atol=1e-6)


@needs_device
@pytest.mark.parametrize("length", [1, 5, 63, 1000])
def test_a_weighted_user_function_of_1d_windows_runs_at_odd_sizes(length):
    """The window in lanes, the weights (an input) the same in every lane."""
    program = fun([ArrayType(Float, L), ArrayType(Float, 3)], ROWS["weighted3"][1])
    rng = np.random.default_rng(length)
    a, k = rng.uniform(-1, 1, length).astype(np.float32), rng.uniform(-1, 1, 3).astype(np.float32)
    assert "vectorize-" in paper(lower(program, {"L": length})) or length < 2
    p = np.pad(a, 1, mode="edge")
    np.testing.assert_allclose(lift.compile(program, lowering="default")(a, k),
                               k[0] * p[:-2] + k[1] * p[1:-1] + k[2] * p[2:], rtol=1e-5, atol=1e-6)
