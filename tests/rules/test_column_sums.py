"""Bare and column reductions and stencil windows (`reduce-map-id`, `map-transpose-transpose`,
`lift.rules.column_sums`): each rule and strategy against the interpreter on random sizes and data (Hypothesis)."""

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import (ArrayType, Float, Join, Map, Pad, PadToMultiple, Reduce, ReduceSeq, SizeVar, Slide, Transpose,
                  VectorType, Vectorize, Zip, fun, infer, interpret, paper)
from lift.ir.nodes import Lambda
from lift.rules import RewriteEngine
from lift.rules.column_sums import (blocked_columns, blocked_windows, column_reduction, folded_grid, grid_windows,
                                   partial_column_sums, transpose_tiles, transposition, windows)
from lift.rules.default_lowering import clean_up, lower_rest
from lift.rules.strategy import Focus, outermost

from userfuns import add, mult, neg

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
ENGINE = RewriteEngine()


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _rewritten(program, rule):
    places = [rw for rw in ENGINE.rewrites(program) if rw.rule == rule]
    assert places, f"{rule} does not apply to {paper(program)}"
    new = ENGINE.apply(program, places[0])
    assert infer(new).type == infer(program).type
    return new


@SETTINGS
@given(st.integers(1, 9), st.integers(0, 1 << 16))
def test_reduce_map_id_gives_a_bare_reduction_its_map(n, seed):
    x = _rand(np.random.default_rng(seed), n)
    program = fun([ArrayType(Float, n)], lambda v: Reduce(add, 0.0)(v))
    new = _rewritten(program, "reduce-map-id")
    assert paper(new) == "reduce(add, 0.0) ∘ map(id)"
    np.testing.assert_array_equal(interpret(new, x), interpret(program, x))
    assert "reduce-map-id" not in {rw.rule for rw in ENGINE.rewrites(new)}, "a reduction of a map has its map"


def test_reduce_map_id_keeps_vectors_vectors():
    program = fun([ArrayType(VectorType(Float, 4), 3)], lambda v: Reduce(Vectorize(4, add), Vectorize(4, 0.0))(v))
    new = ENGINE.apply(program, [rw for rw in ENGINE.rewrites(program) if rw.rule == "reduce-map-id"][0])
    assert "vectorize-4(id)" in paper(new)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 1 << 16))
def test_map_transpose_transpose(m, n, seed):
    a = _rand(np.random.default_rng(seed), m, n)
    program = fun([ArrayType(ArrayType(Float, n), m)], lambda x: Map(Reduce(add, 0.0))(x))
    new = _rewritten(program, "map-transpose-transpose")
    assert "transpose ∘ transpose" in paper(new)
    np.testing.assert_array_equal(interpret(new, a), interpret(program, a))
    assert "map-transpose-transpose" not in {rw.rule for rw in ENGINE.rewrites(fun(
        [ArrayType(ArrayType(Float, n), m)], lambda x: Map(Reduce(add, 0.0))(Transpose()(x))))}


@SETTINGS
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 1 << 16))
def test_map_view_fission_and_eta_expansion(m, n, seed):
    """A map reading its element through `join` maps over the joined rows; `map(map(g))` names its element."""
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, n, 2, 3), _rand(rng, 2, 3)
    t = ArrayType(ArrayType(ArrayType(Float, 3), 2), n)
    program = fun([t, ArrayType(ArrayType(Float, 3), 2)], lambda x, w: Map(
        lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(w)))))(x))
    new = _rewritten(program, "map-view-fission")
    assert "map(join)(x)" in paper(new)
    np.testing.assert_array_equal(interpret(new, a, k), interpret(program, a, k))
    twice = fun([t], lambda x: Map(lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(Transpose()(nb))))))(x))
    refused = [rw for rw in ENGINE.rewrites(twice) if rw.rule == "map-view-fission"]
    assert not refused, "the element is read through two different views"
    grid = fun([ArrayType(ArrayType(Float, n), m)], lambda x: Map(Map(neg))(x))
    expanded = _rewritten(grid, "map-eta-expansion")
    assert isinstance(expanded.body.f.f, Lambda) and isinstance(expanded.body.f.f.body.f, Map)
    b = _rand(rng, m, n)
    np.testing.assert_array_equal(interpret(expanded, b), interpret(grid, b))
    assert "map-eta-expansion" not in {rw.rule for rw in ENGINE.rewrites(expanded) if rw.location == "body"}


def _lowered(program, strategy, sizes):
    focus = (strategy >> lower_rest >> clean_up)(Focus(program, RewriteEngine(sizes=sizes)))
    assert focus is not None, f"{strategy} does not apply to {paper(program)}"
    return focus.program


@SETTINGS
@given(st.sampled_from([1, 2, 4]), st.sampled_from([4, 8]), st.sampled_from([None, 4]), st.booleans(),
       st.integers(0, 1 << 16))
def test_partial_column_sums(chunks, chunk, width, mapped, seed):
    """Column sums (`map(reduce)`, or of a map of each column) as partial sums of chunks of rows folded row by
    row, lowered: what the interpreter computes of the program."""
    m, n = chunks * chunk, 8
    a = _rand(np.random.default_rng(seed), m, n)
    t = ArrayType(ArrayType(Float, n), m)
    program = fun([t], lambda x: Map(lambda col: Reduce(add, 0.0)(Map(neg)(col)))(Transpose()(x))) if mapped else \
        fun([t], lambda x: Map(Reduce(add, 0.0))(Transpose()(x)))
    new = _lowered(program, outermost(column_reduction, partial_column_sums(chunk, width)), {})
    text = paper(new)
    assert f"map-global(join ∘ transpose ∘ reduce-seq(" in text and f"split-{chunk}" in text, text
    assert (f"vectorize-{width}(add)" in text) == (width is not None)
    np.testing.assert_allclose(interpret(new, a), interpret(program, a), rtol=1e-5)


@SETTINGS
@given(st.integers(1, 40), st.integers(1, 9), st.sampled_from([0.0, 1.5, "clamp"]), st.sampled_from([2, 4, 8]),
       st.integers(0, 1 << 16))
def test_pad_transpose(m, n, v, k, seed):
    """The columns of a matrix padded (with a constant, or copies of the last column) are its rows padded."""
    a = _rand(np.random.default_rng(seed), m, n)
    program = fun([ArrayType(ArrayType(Float, n), m)], lambda x: PadToMultiple(k, v)(Transpose()(x)))
    new = _rewritten(program, "pad-transpose")
    assert paper(new) == f"transpose ∘ map(pad-to-multiple-{k}({v}))"
    np.testing.assert_array_equal(interpret(new, a), interpret(program, a))


@SETTINGS
@given(st.integers(1, 40), st.integers(2, 70), st.sampled_from([8, 16, 32, 64]), st.integers(0, 1 << 16))
def test_blocked_columns_over_any_number_of_columns(m, n, w, seed):
    """A transposed gemv's columns in blocks of `w`, over the columns padded to a multiple of `w` where it does not
    divide them (`pad-map`, `pad-transpose`), lowered: what the interpreter computes of the program."""
    rng = np.random.default_rng(seed)
    a, y = _rand(rng, m, n), _rand(rng, m)
    program = fun([ArrayType(ArrayType(Float, n), m), ArrayType(Float, m)], lambda x, y: Map(
        lambda col: Reduce(add, 0.0)(Map(mult)(Zip(col, y))))(Transpose()(x)))
    w = min(w, 1 << (n - 1).bit_length())  # pad-map's multiples: powers of two up to the length's next one
    padded = n % w != 0
    new = _lowered(program, outermost(column_reduction, blocked_columns(w, padded)), {})
    text = paper(new)
    assert f"map(split-{w}" in text and ("pad-to-multiple" in text) == padded, text
    np.testing.assert_array_equal(interpret(new, a, y), interpret(program, a, y))


@SETTINGS
@given(st.sampled_from([1, 2, 3]), st.sampled_from([4, 8]), st.sampled_from([None, 4]), st.integers(0, 1 << 16))
def test_blocked_windows_of_a_stencil(blocks, block, width, seed):
    """A 1-D 3-point stencil in blocks of `block` results, each folding three shifted rows of the grid."""
    n = blocks * block
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, n), _rand(rng, 3)
    program = fun([ArrayType(Float, n), ArrayType(Float, 3)], lambda x, w: Join()(Map(
        lambda win: Reduce(add, 0.0)(Map(mult)(Zip(win, w))))(Slide(3, 1)(Pad(1, 1, "clamp")(x)))))
    new = _lowered(program, outermost(windows, blocked_windows(block, width)), {})
    assert "map-global(λ" in paper(new) and f"map(split-{block}) ∘ transpose ∘ slide(3, 1)" in paper(new)
    copy_out = f"map-seq(asScalar ∘ map-seq(vectorize-{width}(id)) ∘ asVector-{width}) ∘ toPrivate(reduce-seq("
    assert (copy_out in paper(new)) == (width is not None), "the private block is copied out in vectors"
    np.testing.assert_allclose(interpret(new, a, k), interpret(program, a, k), rtol=1e-5)


@SETTINGS
@given(st.integers(1, 5), st.integers(1, 5), st.integers(0, 1 << 16))
def test_folded_window_rows_of_a_2d_stencil(m, n, seed):
    """A 2-D stencil whose window is read flat (`join(nb)`) folds each window row by row, lowered: what the
    interpreter computes of the program."""
    rng = np.random.default_rng(seed)
    a, k = _rand(rng, m, n), _rand(rng, 3, 3)
    program = fun([ArrayType(ArrayType(Float, n), m), ArrayType(ArrayType(Float, 3), 3)], lambda x, w: Map(Map(
        lambda nb: Reduce(add, 0.0)(Map(mult)(Zip(Join()(nb), Join()(w))))))(Map(Transpose())(Slide(3, 1)(Map(
            Slide(3, 1))(Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(x)))))))
    new = _lowered(program, outermost(grid_windows, folded_grid()), {})
    assert "map-global[1](map-global(λ nb. reduce-seq(" in paper(new) and "join ∘ map-seq(reduce-seq(" in paper(new)
    assert "join(nb)" not in paper(new)
    np.testing.assert_allclose(interpret(new, a, k), interpret(program, a, k), rtol=1e-5)


@SETTINGS
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from([2, 4]), st.integers(0, 1 << 16))
def test_transpose_tiles(m, n, b, seed):
    """A transposition in `b × b` tiles, `b` rows of the result per work-item: the transposed matrix."""
    a = _rand(np.random.default_rng(seed), m * b, n * b)
    program = fun([ArrayType(ArrayType(Float, n * b), m * b)], lambda x: Map(Map(neg))(Transpose()(x)))
    new = _lowered(program, outermost(transposition, transpose_tiles(b)), {})
    assert paper(new).startswith("join ∘ map-global(map(join) ∘ transpose ∘ map-seq(map-seq(map-seq(neg)))"), paper(new)
    np.testing.assert_array_equal(interpret(new, a), -a.T)


def test_the_selectors_find_their_places():
    t = ArrayType(ArrayType(Float, 4), 4)
    sums = fun([t], lambda x: Map(Reduce(add, 0.0))(Transpose()(x)))
    assert outermost(column_reduction)(Focus(sums, ENGINE)) is not None
    rows = fun([t], lambda x: Map(Reduce(add, 0.0))(x))
    assert outermost(column_reduction)(Focus(rows, ENGINE)) is None
    assert outermost(windows)(Focus(rows, ENGINE)) is not None, "rows of 4: windows"
    long_rows = fun([ArrayType(ArrayType(Float, SizeVar("N")), 4)], lambda x: Map(Reduce(add, 0.0))(x))
    assert outermost(windows)(Focus(long_rows, ENGINE)) is None, "gemv's rows are not windows"
    assert outermost(transposition)(Focus(sums, ENGINE)) is None
    seq = fun([t], lambda x: Map(ReduceSeq(add, 0.0))(Transpose()(x)))
    assert outermost(column_reduction)(Focus(seq, ENGINE)) is None
