"""`vectorize-windows` (a map over windows vectorised across the windows), `reduce-seq-unroll`, `map-seq-unswitch`,
and the stencil strategies built from them (`lift.rules.column_sums.vector_windows`, `vector_grid`): each against
the interpreter on random sizes, windows, functions and data (Hypothesis), and the places where they must not
apply."""

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import (ArrayType, Float, Join, Map, MapSeq, Pad, Reduce, ReduceSeq, ReduceSeqUnroll, SizeVar, Slide, Zip,
                  fun, infer, interpret, paper)
from lift.ir.printer import python_source
from lift.rules import Rewrite, RewriteEngine
from lift.rules.column_sums import grid_windows, vector_grid, vector_windows, windows
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.rule import RuleNotApplicable
from lift.rules.strategy import Focus, outermost

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from blas import add, mult, neg  # noqa: E402
from jacobi import jacobi1d, jacobi2d  # noqa: E402

SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _rewrites(program, rule, sizes=None):
    return [rw for rw in RewriteEngine(sizes=sizes or {}).rewrites(program) if rw.rule == rule]


def _applied(program, rule, **params):
    engine = RewriteEngine()
    places = [rw for rw in engine.rewrites(program) if rw.rule == rule and rw.param_dict == params]
    assert places, f"{rule} {params} does not apply to {paper(program)}"
    new = engine.apply(program, places[0])
    assert infer(new).type == infer(program).type
    return new


STENCILS = {
    # a 3-point stencil over a clamped array, its window's reduction giving [1] (as a user writes it)
    "slide": (lambda m: ArrayType(Float, m), lambda x, k: Map(lambda w: Reduce(add, 0.0)(Map(mult)(Zip(w, k))))(
        Slide(3, 1)(Pad(1, 1, "clamp")(x))), 3),
    # any function of rows: the sum of each row's negated elements, joined into an array of scalars
    "rows": (lambda m: ArrayType(ArrayType(Float, 3), m), lambda x, k: Join()(Map(
        lambda row: Reduce(add, 0.0)(Map(neg)(row)))(x)), 3),
    # a function giving arrays: each row's elements negated and scaled by the weights
    "arrays": (lambda m: ArrayType(ArrayType(Float, 3), m), lambda x, k: Map(
        lambda row: Map(mult)(Zip(Map(neg)(row), k)))(x), 3),
    # 2-D neighbourhoods read flat (`join`), weighted by a 3x3 matrix
    "grid": (lambda m: ArrayType(ArrayType(ArrayType(Float, 3), 3), m), lambda x, k: Map(
        lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(k)))))(x), (3, 3)),
}


@SETTINGS
@given(st.sampled_from(sorted(STENCILS)), st.sampled_from([4, 8]), st.integers(1, 3), st.integers(0, 1 << 16))
def test_vectorize_windows_computes_every_window_in_its_lane(kind, n, vectors, seed):
    t, body, kshape = STENCILS[kind]
    m = n * vectors
    rng = np.random.default_rng(seed)
    program = fun([t(m), ArrayType(Float, 3) if kshape == 3 else ArrayType(ArrayType(Float, 3), 3)], body)
    x = _rand(rng, m, *([3] if kind in ("rows", "arrays") else [3, 3] if kind == "grid" else []))
    k = _rand(rng, *((kshape,) if kshape == 3 else kshape))
    new = _applied(program, "vectorize-windows", n=n)
    assert f"vectorize-{n}(" in paper(new) and f"asVector-{n}" in paper(new), paper(new)
    np.testing.assert_allclose(np.ravel(interpret(new, x, k)), np.ravel(interpret(program, x, k)), rtol=1e-6)


def test_vectorize_windows_applies_only_where_it_means_the_same():
    n = SizeVar("N")
    scalars = fun([ArrayType(Float, 16)], lambda x: Map(neg)(x))
    assert not _rewrites(scalars, "vectorize-windows"), "elements that are scalars are vectorize-map's"
    odd = fun([ArrayType(ArrayType(Float, 3), 12)], lambda x: Map(lambda r: Reduce(add, 0.0)(r))(x))
    widths = {rw.param_dict["n"] for rw in _rewrites(odd, "vectorize-windows")}
    assert widths == {2, 3, 4}, "the vector widths that divide the 12 windows"
    nested = fun([ArrayType(ArrayType(Float, 3), 8)], lambda x: Map(lambda r: Map(neg)(r))(x))
    assert _rewrites(nested, "vectorize-windows"), "a map of arrays of scalars gives its lanes back as arrays"
    pairs = fun([ArrayType(ArrayType(Float, 3), 8)], lambda x: Map(lambda r: Zip(r, r))(x))
    assert not _rewrites(pairs, "vectorize-windows"), "tuples are not scalars"
    symbolic = fun([ArrayType(ArrayType(Float, 3), n)], lambda x: Map(lambda r: Reduce(add, 0.0)(r))(x))
    widths = {rw.param_dict["n"] for rw in _rewrites(symbolic, "vectorize-windows", {"N": 20})}
    assert widths == {2, 4}, "the vector widths that divide N = 20"


@SETTINGS
@given(st.integers(1, 6), st.integers(0, 1 << 16))
def test_reduce_seq_unroll(m, seed):
    x = _rand(np.random.default_rng(seed), m)
    program = fun([ArrayType(Float, m)], lambda v: ReduceSeq(add, 0.5)(v))
    new = _applied(program, "reduce-seq-unroll")
    assert paper(new) == "reduce-seq-unroll(add, 0.5)"
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))
    assert not _rewrites(new, "reduce-seq-unroll"), "already unrolled"
    assert not _rewrites(fun([ArrayType(Float, SizeVar("N"))], lambda v: ReduceSeq(add, 0.0)(v)), "reduce-seq-unroll")


@SETTINGS
@given(st.integers(1, 6), st.booleans(), st.integers(0, 1 << 16))
def test_map_seq_unswitch(m, rolled, seed):
    """Either form of the checked copy (`rolled`) means the map; the form is printed, and kept by the DSL source."""
    x = _rand(np.random.default_rng(seed), m, 3)
    program = fun([ArrayType(ArrayType(Float, 3), m)], lambda v: MapSeq(lambda r: ReduceSeqUnroll(add, 0.0)(r))(v))
    new = _applied(program, "map-seq-unswitch", rolled=rolled)
    assert paper(new) == f"map-seq-unswitch(reduce-seq-unroll(add, 0.0){', rolled' if rolled else ''})", paper(new)
    assert eval(python_source(new), {**vars(lift), "add": add}) == new
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))
    assert not _rewrites(new, "map-seq-unswitch"), "already unswitched"


def _lowered(program, strategy, sizes):
    focus = (strategy >> lower_rest >> clean_up)(Focus(program, RewriteEngine(sizes=sizes)))
    assert focus is not None, f"{strategy} does not apply to {paper(program)}"
    return focus.program


@SETTINGS
@given(st.sampled_from([(8, 8), (16, 8), (16, 4), (16, 16)]), st.integers(1, 3), st.integers(0, 1 << 16))
def test_vector_windows_of_the_1d_jacobi(block_width, blocks, seed):
    """jacobi1d in blocks of `block` windows, `width` to a vector, each window's fold unrolled."""
    block, width = block_width
    sizes = {"L": block * blocks}
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, sizes["L"]), _rand(rng, 3)
    new = _lowered(jacobi1d, outermost(windows, vector_windows(block, width)), sizes)
    text = paper(new)
    assert f"map-global(" in text and f"reduce-seq-unroll(λ" in text and f"asVector-{width}" in text, text
    np.testing.assert_allclose(interpret(new, a, k), interpret(jacobi1d, a, k), rtol=1e-5)


@SETTINGS
@given(st.sampled_from([(8, 8), (8, 4), (16, 16)]), st.integers(1, 2), st.integers(1, 5), st.integers(0, 1 << 16))
def test_vector_grid_of_the_2d_jacobi(block_width, blocks, m, seed):
    """jacobi2d, each row's windows in vector blocks on dimension 0, the rows on dimension 1."""
    block, width = block_width
    sizes = {"M": m, "N": block * blocks}
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, m, sizes["N"]), _rand(rng, 3, 3)
    new = _lowered(jacobi2d, outermost(grid_windows, vector_grid(block, width)), sizes)
    text = paper(new)
    assert "map-global[1](" in text and f"vectorize-{width}(mult)" in text, text
    np.testing.assert_allclose(interpret(new, a, k), interpret(jacobi2d, a, k), rtol=1e-5)


@SETTINGS
@given(st.sampled_from([(8, 8), (16, 8), (16, 4), (16, 16), (32, 16)]), st.integers(1, 40), st.integers(0, 1 << 16))
def test_padded_vector_windows_of_the_1d_jacobi(block_width, length, seed):
    """jacobi1d at any length, its windows padded to a multiple of the block (`pad-map`), the padding's results
    dropped."""
    block, width = block_width
    sizes = {"L": length}
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, length), _rand(rng, 3)
    strategy = outermost(windows, vector_windows(block, width, padded=True))
    focus = (strategy >> lower_rest >> clean_up)(Focus(jacobi1d, RewriteEngine(sizes=sizes)))
    if length % block == 0 or block >= 2 * length:
        assert focus is None, "pad-map pads only lengths the block does not divide, up to the next power of two"
        return
    assert focus is not None and f"pad-to-multiple-{block}" in paper(focus.program), paper(focus.program)
    np.testing.assert_allclose(interpret(focus.program, a, k), interpret(jacobi1d, a, k), rtol=1e-5)


@SETTINGS
@given(st.sampled_from([(8, 8), (16, 4), (16, 16)]), st.integers(1, 4), st.integers(1, 40), st.integers(0, 1 << 16))
def test_padded_vector_grid_of_the_2d_jacobi(block_width, m, n, seed):
    """jacobi2d with rows of any length, each row's windows padded to a multiple of the block."""
    block, width = block_width
    sizes = {"M": m, "N": n}
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, m, n), _rand(rng, 3, 3)
    focus = (outermost(grid_windows, vector_grid(block, width, padded=True)) >> lower_rest >> clean_up)(
        Focus(jacobi2d, RewriteEngine(sizes=sizes)))
    if n % block == 0 or block >= 2 * n:
        assert focus is None
        return
    assert focus is not None and "map-global[1](take-(N)" in paper(focus.program), paper(focus.program)
    np.testing.assert_allclose(interpret(focus.program, a, k), interpret(jacobi2d, a, k), rtol=1e-5)


def test_vector_windows_need_blocks_that_divide():
    assert outermost(windows, vector_windows(16, 8))(Focus(jacobi1d, RewriteEngine(sizes={"L": 24}))) is None
    assert outermost(windows, vector_windows(8, 8))(Focus(jacobi1d, RewriteEngine(sizes={"L": 24}))) is not None
    with pytest.raises(RuleNotApplicable, match="do not apply here"):
        RewriteEngine().apply(fun([ArrayType(ArrayType(Float, 3), 12)], lambda x: Map(
            lambda r: Reduce(add, 0.0)(r))(x)), Rewrite.of("vectorize-windows", "body", {"n": 8}))
