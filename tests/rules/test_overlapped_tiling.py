"""Overlapped tiling (`slide-tiling`, `column-strips`, `lift.rules.overlapped_tiling`), `map-view-before-slide`
(`lift.rules.sliding_window`) and the column strip walk placing them (`lift.rules.column_strips`): random stencils
rewritten and evaluated against the original by the interpreter, against numpy, and (1-D tiles) on the OpenCL
device; and the places where the rules must not apply."""

import functools
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import (ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, Split, Transpose, UserFun, Zip, fun,
                  infer, interpret, paper)
from lift.opencl_gen.compiled import compile
from lift.rules import Rewrite, RewriteEngine
from lift.rules.column_strips import column_strip_walk
from lift.rules.column_sums import grid_windows
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.rule import RuleNotApplicable
from lift.rules.strategy import Focus, is_call, outermost, rewrite

from tests.opencl_device import HAVE_DEVICE

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from stencils import jacobi2d5_high  # noqa: E402
from jacobi import jacobi2d  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
N, R, C = SizeVar("N"), SizeVar("R"), SizeVar("C")
BOUNDARIES = {"none": None, "clamp": "clamp", "zero": 0.0}

add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
mult = UserFun("mult", ("x", "y"), "return x * y;", (Float, Float), Float, python=lambda x, y: x * y)
neg = UserFun("neg", ("x",), "return -x;", (Float,), Float, python=lambda x: -x)


def _rand(rng, *shape, scale=4):
    return rng.integers(-8, 9, shape).astype(np.float32) / scale


def _rewrites(program, rule: str, sizes=None):
    engine = RewriteEngine(sizes=sizes or {})
    return engine, [rw for rw in engine.rewrites(program) if rw.rule == rule]


# --- slide-tiling ------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _stencil(size: int, step: int, boundary: str):
    """`map(weighted sum) ∘ slide(size, step) ∘ pad` over a 1-D array, the weights an input."""
    b = BOUNDARIES[boundary]
    padded = (lambda x: x) if b is None else Pad(size // 2, size // 2, b)
    return fun([ArrayType(Float, N), ArrayType(Float, size)], lambda x, k: Map(
        lambda w: Reduce(add, 0.0)(Map(mult)(Zip(w, k))))(Slide(size, step)(padded(x))))


def _np_windows(x, size: int, step: int, boundary: str):
    b = BOUNDARIES[boundary]
    h = size // 2
    p = x if b is None else np.pad(x, (h, h), mode="edge") if b == "clamp" else np.pad(x, (h, h))
    return np.lib.stride_tricks.sliding_window_view(p, size)[::step]


@functools.lru_cache(maxsize=None)
def _tiled(size: int, step: int, boundary: str, tile: int, tiles: int = 2):
    """The stencil's windows `tile` at a time; `tiles`: how many tiles its windows make (the rewritten program does
    not depend on it, the tiles the rule offers do)."""
    program = _stencil(size, step, boundary)
    halo = 2 * (size // 2) if boundary != "none" else 0
    engine, places = _rewrites(program, "slide-tiling", {"N": (tile * tiles - 1) * step + size - halo})
    (place,) = [rw for rw in places if rw.param_dict == {"tile": tile}]
    return engine.apply(program, place)


@functools.lru_cache(maxsize=None)
def _compiled_tiles(size: int, step: int, boundary: str, tile: int):
    """The tiled stencil with a global work-item per tile (`map-join`), its `tile` windows one after the other."""
    focus = (outermost(is_call(Map), rewrite("map-join")) >> lower_rest >> clean_up)(
        Focus(_tiled(size, step, boundary, tile), RewriteEngine()))
    assert "map-global(map-seq(" in paper(focus.program), paper(focus.program)
    return compile(focus.program)


@SETTINGS
@given(st.sampled_from([3, 5]), st.sampled_from([1, 1, 2, 3]), st.sampled_from(sorted(BOUNDARIES)),
       st.sampled_from([2, 3, 4, 8]), st.integers(2, 7), st.integers(0, 1 << 16))
def test_slide_tiling_means_the_same(size, step, boundary, tile, tiles, seed):
    """Windows `tile` at a time from tiles overlapping by `size - step`: the interpreter's result unchanged, numpy's
    sliding windows, and on the device a work-item per tile."""
    h = 0 if boundary == "none" else 2 * (size // 2)
    length = (tile * tiles - 1) * step + size - h
    rng = np.random.default_rng(seed)
    x, k = _rand(rng, length), _rand(rng, size, scale=2)
    program = _stencil(size, step, boundary)
    new = _tiled(size, step, boundary, tile, tiles)
    assert infer(new).type == infer(program).type
    assert f"slide({(tile - 1) * step + size}, {tile * step})" in paper(new), paper(new)
    expected = interpret(program, x, k)
    np.testing.assert_array_equal(interpret(new, x, k), expected)
    reference = _np_windows(x.astype(np.float64), size, step, boundary) @ k
    np.testing.assert_allclose(np.ravel(expected), reference, rtol=1e-6)
    if HAVE_DEVICE:
        np.testing.assert_allclose(np.ravel(_compiled_tiles(size, step, boundary, tile)(x, k)), reference, rtol=1e-6)


def test_slide_tiling_offers_tiles_that_divide_the_windows():
    program = _stencil(3, 1, "clamp")
    _, places = _rewrites(program, "slide-tiling", {"N": 12})
    assert sorted(rw.param_dict["tile"] for rw in places) == [2, 3, 4, 6], "12 windows; one tile of all is no tiling"
    _, places = _rewrites(program, "slide-tiling", {"N": 13})
    assert not places, "13 windows: no tile divides them"
    gaps = fun([ArrayType(Float, 11)], lambda x: Map(lambda w: Reduce(add, 0.0)(w))(Slide(2, 3)(x)))
    assert not _rewrites(gaps, "slide-tiling")[1], "windows with gaps between them"


# --- column-strips -----------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _neighbourhoods(n: int, m: int, t: int, boundary: str):
    """The `n x m` neighbourhoods (columns shifted by `t`) of a padded grid, each weighted by `k`."""
    b = BOUNDARIES[boundary]
    padded = (lambda a: a) if b is None else lambda a: Pad(n // 2, n // 2, b)(Map(Pad(m // 2, m // 2, b))(a))
    weighted = lambda k: lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(k))))
    return fun([ArrayType(ArrayType(Float, C), R), ArrayType(ArrayType(Float, m), n)],
               lambda a, k: Map(Map(weighted(k)))(Map(Transpose())(Slide(n, 1)(Map(Slide(m, t))(padded(a))))))


def _np_neighbourhoods(a, k, t: int, boundary: str):
    n, m = k.shape
    b = BOUNDARIES[boundary]
    p = a if b is None else np.pad(a, ((n // 2,) * 2, (m // 2,) * 2), mode="edge" if b == "clamp" else "constant")
    windows = np.lib.stride_tricks.sliding_window_view(p, (n, m))[:, ::t]
    return np.einsum("ijkl,kl->ij", windows.astype(np.float64), k)


@SETTINGS
@given(st.sampled_from([(3, 3, 1), (3, 5, 1), (5, 3, 2), (1, 3, 3)]), st.sampled_from(sorted(BOUNDARIES)),
       st.integers(1, 7), st.integers(2, 40), st.sampled_from([4, 8, 16]), st.integers(0, 1 << 16))
def test_column_strips_mean_the_same(shape, boundary, rows, windows, w, seed):
    """Strips of `w` results, rows that `w` does not divide extended and their extra results dropped: the
    interpreter's result unchanged, and numpy's."""
    n, m, t = shape
    h = 0 if boundary == "none" else 2 * (m // 2)
    r, c = rows + (0 if boundary != "none" else n - 1), (windows - 1) * t + m - h
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, r, c), _rand(rng, n, m, scale=2)
    program = _neighbourhoods(n, m, t, boundary)
    engine, places = _rewrites(program, "column-strips", {"R": r, "C": c})
    by_width = {rw.param_dict["w"]: rw for rw in places}
    if w >= windows:
        assert w not in by_width, "a strip as wide as the row is no tiling"
        return
    place = by_width[w]
    assert place.param_dict["extra"] == -windows % w
    new = engine.apply(program, place)
    assert ("take-(" in paper(new)) == (windows % w != 0), paper(new)
    expected = interpret(program, a, k)
    np.testing.assert_array_equal(interpret(new, a, k), expected)
    np.testing.assert_allclose(np.reshape(expected, (rows, windows)), _np_neighbourhoods(a, k, t, boundary),
                               rtol=1e-6)


def test_column_strips_apply_only_to_a_high_level_map_over_neighbourhoods():
    grid = ArrayType(ArrayType(Float, 32), 6)
    total = lambda nb: Reduce(add, 0.0)(Join()(nb))
    nbs = lambda x, size=3, step=1: Map(Transpose())(Slide(3, 1)(Map(Slide(size, step))(x)))
    places = lambda body: _rewrites(fun([grid], body), "column-strips")[1]
    assert sorted(rw.param_dict["w"] for rw in places(lambda x: Map(Map(total))(nbs(x)))) == [4, 8, 16]
    assert not places(lambda x: Map(Map(total))(nbs(x, 2, 5))), "column windows with gaps between them"
    assert not places(lambda x: Map(Map(lambda r: Reduce(add, 0.0)(r)))(Map(Slide(3, 1))(x))), "not neighbourhoods"
    program = fun([grid], lambda x: Map(Map(total))(nbs(x)))
    engine = RewriteEngine()
    (place,) = [rw for rw in engine.rewrites(program) if rw.rule == "column-strips" and rw.param_dict["w"] == 4]
    with pytest.raises(RuleNotApplicable, match="do not apply here"):
        engine.apply(program, Rewrite.of("column-strips", place.location, {"w": 4, "extra": 3}))


# --- map-view-before-slide ---------------------------------------------------------------------------------


def test_a_window_read_through_a_view_of_its_elements_slides_over_the_viewed_elements():
    rows = ArrayType(ArrayType(Float, 4), N)
    program = fun([rows], lambda x: Map(lambda w: Reduce(add, 0.0)(Join()(Join()(Map(Slide(2, 2))(w)))))(
        Slide(3, 1)(x)))
    engine, (place,) = _rewrites(program, "map-view-before-slide")
    new = engine.apply(program, place)
    assert "slide(3, 1) ∘ map(slide(2, 2))" in paper(new), paper(new)
    x = _rand(np.random.default_rng(1), 9, 4)
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))


def test_map_view_before_slide_moves_views_of_a_window_read_once_only():
    rows = ArrayType(ArrayType(Float, 4), N)
    places = lambda body: _rewrites(fun([rows], body), "map-view-before-slide")[1]
    total = lambda e: Reduce(add, 0.0)(Join()(e))
    halves = lambda w: Join()(Map(Slide(2, 2))(w))
    assert places(lambda x: Map(lambda w: total(halves(w)))(Slide(3, 1)(x)))
    assert not places(lambda x: Map(lambda w: total(Map(Map(neg))(w)))(Slide(3, 1)(x))), \
        "the map over the window's rows computes"
    assert not places(lambda x: Map(lambda w: Map(add)(Zip(total(halves(w)), total(w))))(Slide(3, 1)(x))), \
        "the window is read twice"
    assert not places(lambda x: Map(lambda w: total(halves(w)))(Split(3)(x))), "no slide's windows"


# --- the column strip walk ---------------------------------------------------------------------------------


def _walked(program, w: int, h: int, sizes: dict):
    strategy = column_strip_walk(w, -sizes["N"] % w, h)
    return (outermost(grid_windows, strategy) >> lower_rest >> clean_up)(Focus(program, RewriteEngine(sizes=sizes)))


@SETTINGS
@given(st.sampled_from(["jacobi2d", "jacobi2d5_high"]), st.sampled_from([4, 8, 16]), st.sampled_from([0, 2, 4]),
       st.integers(1, 12), st.integers(2, 40), st.integers(0, 1 << 16))
def test_the_column_strip_walk_means_the_same(name, w, h, m, n, seed):
    """Strips of `w` results walked down by `map-seq-slide` (whole, or in blocks of `h` rows where `h` divides the
    rows), each band's neighbourhoods in `w` lanes, the window holding each row's shifted vectors: the
    interpreter's result unchanged."""
    program = {"jacobi2d": jacobi2d, "jacobi2d5_high": jacobi2d5_high}[name]
    sizes = {"M": m, "N": n}
    focus = _walked(program, w, h, sizes)
    if w >= n or (h and (m % h or m == h)):
        assert focus is None, "strips narrower than the row, blocks of rows that divide the rows"
        return
    assert focus is not None, (name, w, h, sizes)
    text = paper(focus.program)
    assert "map-seq-slide(" in text and f"asVector-{w} ∘ transpose ∘ slide(3, 1)" in text, text
    assert ("map-global[1](" in text) == bool(h), text
    rng = np.random.default_rng(seed)
    args = (_rand(rng, m, n),) + ((_rand(rng, 3, 3, scale=2),) if name == "jacobi2d" else ())
    np.testing.assert_allclose(np.ravel(interpret(focus.program, *args)), np.ravel(interpret(program, *args)),
                               rtol=1e-5, atol=1e-6)
