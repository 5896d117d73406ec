"""`map-seq-slide` (`map-seq(f) ∘ slide(size, step) → map-seq-slide(f, size, step)`): random stencils rewritten
and evaluated against the original by the interpreter and, on the OpenCL device, against numpy; and the places
where the rule must not apply."""

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import (ArrayType, Float, Get, Join, Map, MapGlb, MapSeq, MapSeqSlide, MapSeqUnroll, Pad, Reduce, ReduceSeq,
                  SizeVar, Slide, Transpose, UserFun, Vectorize, VectorType, Zip, fun, infer, interpret, paper)
from lift.errors import LiftTypeError
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate
from lift.rules import RewriteEngine
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import Focus

from tests.opencl_device import HAVE_DEVICE

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
N = SizeVar("N")
F4 = VectorType(Float, 4)

add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
mult = UserFun("mult", ("x", "y"), "return x * y;", (Float, Float), Float, python=lambda x, y: x * y)
madd = UserFun("madd", ("acc", "x", "w"), "return acc + x * w;", (Float, Float, Float), Float,
               python=lambda acc, x, w: acc + x * w)
BOUNDARIES = {"none": None, "clamp": "clamp", "zero": 0.0}


def _weighted(size: int):
    """A window's sum weighted by the array `k` of `size` weights."""
    return lambda k: lambda w: ReduceSeq(lambda acc, p: madd(acc, Get(p, 0), Get(p, 1)), 0.0)(Zip(w, k))


def _padded(x, size: int, boundary):
    return x if boundary is None else Pad(size // 2, size // 2, boundary)(x)


def _np_padded(x, size: int, boundary):
    if boundary is None:
        return x
    h = size // 2
    return np.pad(x, (h, h), mode="edge") if boundary == "clamp" else np.pad(x, (h, h))


@functools.lru_cache(maxsize=None)
def _stencil(size: int, step: int, boundary: str, per_item: int):
    """A 1-D stencil over windows of `size` shifted by `step`: one work-item walking the whole array
    (`per_item` 0), or each work-item a strip of `per_item` windows (`slide` of the windows' strips)."""
    f = _weighted(size)
    b = BOUNDARIES[boundary]
    if per_item == 0:
        body = lambda x, k: MapSeq(f(k))(Slide(size, step)(_padded(x, size, b)))
    else:
        strip = (per_item - 1) * step + size
        body = lambda x, k: Join()(MapGlb(lambda s: MapSeq(f(k))(Slide(size, step)(s)))(
            Slide(strip, per_item * step)(_padded(x, size, b))))
    return fun([ArrayType(Float, N), ArrayType(Float, size)], body)


def _rewritten(program):
    engine = RewriteEngine()
    places = [rw for rw in engine.rewrites(program) if rw.rule == "map-seq-slide"]
    assert len(places) == 1, paper(program)
    new = engine.apply(program, places[0])
    assert infer(new).type == infer(program).type
    slides = paper(new).replace("map-seq-slide(", "").count("slide(")
    assert "map-seq-slide(" in paper(new) and slides == paper(program).count("slide(") - 1, paper(new)
    return new


@functools.lru_cache(maxsize=None)
def _compiled(size: int, step: int, boundary: str, per_item: int):
    return compile(_rewritten(_stencil(size, step, boundary, per_item)))


def _reference(x, k, size: int, step: int, boundary: str, per_item: int):
    windows = np.lib.stride_tricks.sliding_window_view(_np_padded(x, size, BOUNDARIES[boundary]), size)[::step]
    if per_item:
        windows = windows[:len(windows) // per_item * per_item]
    return (windows.astype(np.float64) @ k.astype(np.float64)).astype(np.float32)


@st.composite
def stencils(draw):
    size = draw(st.sampled_from([3, 5]))
    step = draw(st.sampled_from([1, 1, 2]))
    boundary = draw(st.sampled_from(sorted(BOUNDARIES)))
    per_item = draw(st.sampled_from([0, 1, 4]))
    h = 0 if boundary == "none" else 2 * (size // 2)
    windows = draw(st.integers(1, 9)) * max(per_item, 1)
    length = (windows - 1) * step + size - h
    if per_item == 0 and step == 1:
        length += draw(st.integers(0, 20)) * 2  # odd lengths too where nothing has to divide
    return size, step, boundary, per_item, length


@SETTINGS
@given(stencils(), st.integers(0, 1 << 16))
def test_map_seq_slide_means_the_same(stencil, seed):
    size, step, boundary, per_item, length = stencil
    rng = np.random.default_rng(seed)
    x = rng.integers(-8, 9, length).astype(np.float32) / 4
    k = rng.integers(-4, 5, size).astype(np.float32) / 2
    program = _stencil(size, step, boundary, per_item)
    new = _rewritten(program)
    expected = interpret(program, x, k)
    np.testing.assert_array_equal(interpret(new, x, k), expected)
    np.testing.assert_allclose(np.ravel(expected), _reference(x, k, size, step, boundary, per_item), rtol=1e-6)
    if HAVE_DEVICE:
        got = _compiled(size, step, boundary, per_item)(x, k)
        np.testing.assert_allclose(np.ravel(got), _reference(x, k, size, step, boundary, per_item), rtol=1e-6)


def test_the_window_is_private_and_loaded_step_elements_an_iteration():
    """Each input element read once: `size - step` before the loop, `step` in it; the window shifted in place."""
    source = generate(_rewritten(_stencil(5, 2, "clamp", 0)), "s").source
    assert "float pmem_0[5];" in source, source
    loop = source[source.index("for ("):]
    assert loop.count("= x[") == 2 and source.count("= x[") == 5, source
    assert [f"pmem_0[{j}] = pmem_0[{j + 2}];" in loop for j in range(3)] == [True] * 3, source


@pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device (install pocl-opencl-icd)")
def test_windows_of_vectors_and_of_rows():
    """Elements that are vectors (a strip of columns as one float4) or rows of constant length (a 2-D stencil
    walking down a column strip) live in the window as they are."""
    rng, width = np.random.default_rng(7), 4
    vsum = MapSeq(lambda w: ReduceSeq(Vectorize(4, add), Vectorize(4, 0.0))(w))
    vectors = fun([ArrayType(F4, N)], lambda x: vsum(Slide(3, 1)(Pad(1, 1, "clamp")(x))))
    rows = fun([ArrayType(ArrayType(Float, width), N)], lambda x: MapSeq(
        lambda w: MapSeq(lambda col: ReduceSeq(add, 0.0)(col))(Transpose()(w)))(Slide(3, 1)(x)))
    x = rng.integers(-8, 9, (11, width)).astype(np.float32)
    for program in (vectors, rows):
        new = _rewritten(program)
        expected = interpret(program, x)
        np.testing.assert_array_equal(interpret(new, x), expected)
        np.testing.assert_allclose(compile(new)(x).reshape(expected.shape), expected, rtol=1e-6)
    sums = np.lib.stride_tricks.sliding_window_view(np.pad(x, ((1, 1), (0, 0)), mode="edge"), 3, axis=0).sum(-1)
    np.testing.assert_allclose(np.reshape(interpret(vectors, x), sums.shape), sums, rtol=1e-6)


def test_map_seq_slide_applies_only_to_a_sequential_map_over_overlapping_windows():
    engine = RewriteEngine()

    def places(body, t=ArrayType(Float, 12)):
        return [rw for rw in engine.rewrites(fun([t], body)) if rw.rule == "map-seq-slide"]

    total = lambda w: ReduceSeq(add, 0.0)(w)
    assert places(lambda x: MapSeq(total)(Slide(3, 1)(x)))
    assert places(lambda x: MapSeq(total)(Slide(3, 3)(x)))
    assert not places(lambda x: MapSeq(total)(Slide(2, 5)(x))), "windows with gaps between them"
    assert not places(lambda x: MapGlb(total)(Slide(3, 1)(x))), "parallel windows"
    assert not places(lambda x: MapSeqUnroll(total)(Slide(3, 1)(x))), "an unrolled map"
    assert not places(lambda x: MapSeq(total)(Transpose()(x)), ArrayType(ArrayType(Float, 3), 4)), "no slide"
    grid = ArrayType(ArrayType(Float, 12), 5)
    flat = lambda nb: total(Join()(nb))
    nbs = lambda size, step: lambda x: Map(Map(flat))(Map(Transpose())(Slide(3, 1)(Map(Slide(size, step))(x))))
    two_d = lambda body: [rw for rw in engine.rewrites(fun([grid], body)) if rw.rule == "map-seq-slide-2d"]
    assert two_d(nbs(3, 1)) and two_d(nbs(2, 2))
    assert not two_d(nbs(2, 5)), "column windows with gaps between them"
    assert not two_d(lambda x: Map(Map(total))(Map(Slide(3, 1))(x))), "rows of windows, not neighbourhoods"
    with pytest.raises(LiftTypeError, match=r"map-seq-slide\(.*\) expects a step no larger than the window"):
        fun([ArrayType(Float, 12)], lambda x: MapSeqSlide(total, 2, 5)(x))


@SETTINGS
@given(st.sampled_from([(4, 1), (4, 3), (8, 2), (16, 4)]), st.integers(1, 3), st.integers(1, 2),
       st.integers(0, 1 << 16))
def test_a_2d_stencil_walking_down_column_strips(strip, row_blocks, column_strips, seed):
    """jacobi2d with random weights (`benchmarks.bench_sliding_window`): strips of `w` columns, blocks of `h` rows,
    each block's window of three row segments (three vectors of `w` each) rotated down it by `map-seq-slide`."""
    from benchmarks.bench_sliding_window import jacobi2d, strip_program

    w, h = strip
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, (h * row_blocks, w * column_strips)).astype(np.float32) / 4
    k = rng.integers(-4, 5, (3, 3)).astype(np.float32) / 2
    program = strip_program(w, h)
    new = _rewritten(program)
    expected = interpret(jacobi2d, a, k)
    np.testing.assert_allclose(np.reshape(interpret(new, a, k), expected.shape), expected, rtol=1e-6)
    if HAVE_DEVICE:
        got = _compiled_strip(w, h)(a, k)
        np.testing.assert_allclose(np.reshape(got, expected.shape), expected, rtol=1e-6)


@functools.lru_cache(maxsize=None)
def _compiled_strip(w: int, h: int):
    from benchmarks.bench_sliding_window import strip_program

    return compile(_rewritten(strip_program(w, h)))


def _neighbourhood_program(n: int, m: int, t: int, boundary: str):
    """A 2-D stencil as a user writes it: the `n x m` neighbourhoods (columns shifted by `t`) of the grid, padded
    by `boundary` on every side or not at all, each weighted by `k`."""
    b = BOUNDARIES[boundary]
    padded = (lambda a: a) if b is None else lambda a: Pad(n // 2, n // 2, b)(Map(Pad(m // 2, m // 2, b))(a))
    weighted = lambda k: lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(k))))
    return fun([ArrayType(ArrayType(Float, SizeVar("C")), SizeVar("R")), ArrayType(ArrayType(Float, m), n)],
               lambda a, k: Map(Map(weighted(k)))(Map(Transpose())(Slide(n, 1)(Map(Slide(m, t))(padded(a))))))


@SETTINGS
@given(st.sampled_from([(3, 3, 1), (3, 5, 1), (5, 3, 2), (1, 3, 3)]), st.sampled_from(sorted(BOUNDARIES)),
       st.integers(1, 6), st.integers(1, 6), st.integers(0, 1 << 16))
def test_map_seq_slide_2d_walks_each_band_of_rows(shape, boundary, rows, windows, seed):
    """`map-seq-slide-2d` against the interpreter, then lowered by the default lowering and run on the device
    against numpy."""
    n, m, t = shape
    h = 0 if boundary == "none" else 2 * (m // 2)
    r, c = rows + (0 if boundary != "none" else n - 1), (windows - 1) * t + m - h
    rng = np.random.default_rng(seed)
    a = rng.integers(-8, 9, (r, c)).astype(np.float32) / 4
    k = rng.integers(-4, 5, (n, m)).astype(np.float32) / 2
    program = _neighbourhood_program(n, m, t, boundary)
    engine = RewriteEngine()
    (place,) = [rw for rw in engine.rewrites(program) if rw.rule == "map-seq-slide-2d"]
    new = engine.apply(program, place)
    assert "map-seq-slide(" in paper(new), paper(new)
    expected = interpret(program, a, k)
    np.testing.assert_array_equal(interpret(new, a, k), expected)
    if HAVE_DEVICE:
        got = _compiled_lowered(n, m, t, boundary)(a, k)
        np.testing.assert_allclose(np.reshape(got, expected.shape), expected, rtol=1e-6)


@functools.lru_cache(maxsize=None)
def _compiled_lowered(n: int, m: int, t: int, boundary: str):
    program = _neighbourhood_program(n, m, t, boundary)
    engine = RewriteEngine()
    (place,) = [rw for rw in engine.rewrites(program) if rw.rule == "map-seq-slide-2d"]
    lowered = (lower_rest >> clean_up)(Focus(engine.apply(program, place), engine)).program
    assert "map-global(map-seq-slide(" in paper(lowered), paper(lowered)
    return compile(lowered)
