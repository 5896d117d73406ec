"""Row blocking (`lift.rules.row_blocking`): a map of folds of its rows in blocks of `h` rows per work-item, one
fold into `h` private accumulators, over the rows padded to a multiple of `h` where it does not divide them.
Against the interpreter on random sizes, data and programs (Hypothesis), after the reductions' vector lanes or not;
the default lowering's choice of lanes and blocks (`lift.rules.block_choice`); on the device against numpy."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Literal, Map, Reduce, SizeVar, VectorType, Zip, fun, infer, interpret, paper
from lift.ir import patterns as P
from lift.rules import RewriteEngine
from lift.rules.default_lowering import default_lowering, lower
from lift.rules.reduction_choice import inner_lanes
from lift.rules.row_blocking import row_blocks
from lift.rules.strategy import StrategyFailed, derive, inside, is_call, normalize, outermost, where

from opencl_device import needs_device
from userfuns import add, maxf, mult

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
M, N = SizeVar("M"), SizeVar("N")
MATRIX = ArrayType(ArrayType(Float, N), M)

PROGRAMS = {
    "gemv": fun([MATRIX, ArrayType(Float, N)], lambda A, x: Map(
        lambda row: (Reduce(add, 0.0) @ Map(mult))(Zip(x, row)))(A)),
    "scaled_gemv": fun([MATRIX, ArrayType(Float, N), Float], lambda A, x, a: Map(
        lambda row: Map(lambda v: mult(a, v))((Reduce(add, 0.0) @ Map(mult))(Zip(row, x))))(A)),
    "gemv_of_pairs": fun([MATRIX, ArrayType(Float, N)], lambda A, x: Map(
        lambda row: (Reduce(add, 0.0) @ Map(lambda e: mult(Get(e, 0), Get(e, 1))))(Zip(row, x)))(A)),
    "row_sums": fun([MATRIX], lambda A: Map(lambda row: Reduce(add, 0.0)(row))(A)),
    "row_maxima": fun([MATRIX], lambda A: Map(lambda row: Reduce(maxf, float("-inf"))(row))(A)),
    "row_sums_from_5": fun([MATRIX], lambda A: Map(lambda row: Reduce(add, 5.0)(row))(A)),
}
REFERENCES = {
    "gemv": lambda A, x: A.astype(np.float64) @ x,
    "gemv_of_pairs": lambda A, x: A.astype(np.float64) @ x,
    "scaled_gemv": lambda A, x, a: a * (A.astype(np.float64) @ x),
    "row_sums": lambda A: A.astype(np.float64).sum(axis=1),
    "row_maxima": lambda A: A.max(axis=1),
    "row_sums_from_5": lambda A: A.astype(np.float64).sum(axis=1) + 5.0,
}


def _inputs(name, rng, m, n):
    """Halves of small integers: every sum of them is exact in float32, whatever its order."""
    def rand(*shape):
        return rng.integers(-4, 5, shape).astype(np.float32) / 2
    return [rand(m, n)] + {"gemv": [rand(n)], "gemv_of_pairs": [rand(n)],
                           "scaled_gemv": [rand(n), np.float32(1.5)]}.get(name, [])


def _blocked(name, h, lanes, sizes, padded=False):
    """The program with its inner reductions in `lanes` lanes (None: as they are), then its rows in blocks of `h`
    (`padded`: over the rows padded to a multiple of `h`)."""
    top_rows = is_call(P.Map) & ~inside()
    vectors = normalize(where(is_call(P.Reduce) & inside()) >> inner_lanes(sizes, lanes)) if lanes else None
    blocked = outermost(top_rows, row_blocks(h, padded))
    return derive(vectors >> blocked if vectors else blocked, PROGRAMS[name], sizes).replay(
        PROGRAMS[name], RewriteEngine(sizes=sizes))


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.sampled_from([2, 3, 4, 8]), st.integers(2, 4),
       st.sampled_from([None, 4, 8, 16]), st.integers(1, 4), st.integers(0, 1 << 16))
def test_row_blocks_mean_what_the_program_means(name, h, blocks, lanes, vectors, seed):
    m, n = h * blocks, (lanes or 4) * 4 * vectors
    sizes = {"M": m, "N": n}
    blocked = _blocked(name, h, lanes, sizes)
    shown = paper(blocked)
    assert f"split-{h}" in shown and "toPrivate(reduce-seq(" in shown and "map-global(" in shown
    assert infer(blocked).type == infer(PROGRAMS[name]).type
    inputs = _inputs(name, np.random.default_rng(seed), m, n)
    got = np.asarray(interpret(blocked, *inputs)).reshape(m)
    np.testing.assert_array_equal(got, np.asarray(interpret(PROGRAMS[name], *inputs)).reshape(m))


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.sampled_from([2, 4, 8]), st.integers(2, 4), st.data(),
       st.sampled_from([None, 4, 8, 16]), st.integers(1, 3), st.integers(0, 3), st.integers(0, 1 << 16))
def test_padded_row_blocks_mean_what_the_program_means(name, h, blocks, data, lanes, vectors, odd, seed):
    """Any number of rows: the rows padded to a multiple of `h` with copies of the last (`pad-map-repeat`), the
    padded rows' results dropped; the rows' lengths need not be a multiple of the lanes either (each row then
    padded to a multiple of 4 first, `inner_lanes`)."""
    m, n = h * blocks - data.draw(st.integers(1, h - 1)), (lanes or 4) * 4 * vectors + odd
    sizes = {"M": m, "N": n}
    blocked = _blocked(name, h, lanes, sizes, padded=True)
    shown = paper(blocked)
    assert f"split-{h} ∘ pad-to-multiple-{h}(clamp)" in shown and shown.count("take-(M)") == 1
    assert "toPrivate(reduce-seq(" in shown and "map-global(" in shown
    assert infer(blocked).type == infer(PROGRAMS[name]).type
    inputs = _inputs(name, np.random.default_rng(seed), m, n)
    got = np.asarray(interpret(blocked, *inputs)).reshape(m)
    np.testing.assert_array_equal(got, np.asarray(interpret(PROGRAMS[name], *inputs)).reshape(m))


def test_row_blocks_fold_the_rows_of_a_block_at_once():
    """gemv's rows as float8s, 4 at a time: one fold over the columns of the block, its 4 float8 accumulators in
    private memory, each update unrolled; then each row's 8 lanes summed."""
    shown = re.sub(r"_\d+", "", paper(_blocked("gemv", 4, 8, {"M": 16, "N": 64})))
    assert shown == (
        "λ A, x. join ∘ map-global(λ x. map-seq-unroll(reduce-seq(add, 0.0) ∘ asScalar) ∘ transpose ∘ "
        "map-seq-unroll(map-seq-unroll(id)) ∘ toPrivate(reduce-seq(λ acc, t. map-seq-unroll(λ e. "
        "vectorize-8(add)(get-0(e), vectorize-8(mult)(get-0(t), get-1(e)))) ∘ zip(acc, get-1(t)), "
        "map-seq-unroll(id)(0.0))) ∘ zip(asVector-8(x), transpose ∘ asVector-8(x))) ∘ split-4(A)")


def test_row_blocks_need_folds_of_the_rows():
    """N-body's fold runs over all the particles, not over the map's element: there is nothing to block."""
    P_ = ArrayType(Float, M)
    pairs = fun([P_], lambda p: Map(lambda a: Reduce(add, 0.0)(Map(lambda b: mult(a, b))(p)))(p))
    with pytest.raises(StrategyFailed):
        derive(outermost(is_call(P.Map) & ~inside(), row_blocks(2)), pairs, {"M": 8})


@pytest.mark.parametrize("m, n, lanes, blocked, padded", [
    (64, 1024, 8, True, False), (16, 40, 8, True, False), (16, 20, 4, True, False), (6, 64, 8, False, False),
    (4, 64, 8, False, False), (4099, 1023, 4, True, True), (25, 64, 8, True, True), (17, 64, 8, False, False),
    (4096, 1023, 4, True, False)])
def test_the_default_lowering_blocks_rows_where_4_divides_them_or_padding_adds_an_eighth_at_most(m, n, lanes, blocked,
                                                                                                padded):
    """4 rows a block where 4 divides the rows, or over the rows padded to a multiple of 4 with copies of the last
    where that adds at most an eighth (25 rows, not 17: `lift.rules.block_choice.row_padding`); float8s where 8
    divides the rows' length, else float4s, over rows padded to a multiple of 4 where 4 does not divide it."""
    shown = paper(lower(PROGRAMS["gemv"], {"M": m, "N": n}))
    assert (f"vectorize-{lanes}(add_mult)" in shown) and ("split-4" in shown) == blocked
    assert ("toPrivate(reduce-seq(" in shown) == blocked
    assert ("split-4 ∘ pad-to-multiple-4(clamp)(A)" in shown) == padded and ("split-4(A)" in shown) == (
        blocked and not padded)


def test_the_default_lowering_blocks_rows_only_where_vectors_pay():
    sizes = {"M": 64, "N": 1024}
    assert "split-4(A)" in paper(lower(PROGRAMS["gemv"], sizes, vector_width=8))
    assert "split-4(A)" not in paper(lower(PROGRAMS["gemv"], sizes, vector_width=1))


def test_the_default_lowering_takes_the_lanes_and_blocks_it_is_given():
    sizes = {"M": 64, "N": 256}

    def lowered(lanes, rows):
        derivation = default_lowering(PROGRAMS["gemv"], sizes, row_lanes=lanes, row_block=rows)
        return paper(derivation.replay(PROGRAMS["gemv"], RewriteEngine(sizes=sizes)))

    assert "vectorize-16(add_mult)" in lowered(16, 8) and "split-8(A)" in lowered(16, 8)
    assert "split-" not in lowered(4, 1) and "vectorize-4(add_mult)" in lowered(4, 1)


def test_an_array_literal_of_vectors_holds_one_scalar_in_every_lane():
    lit = Literal(0.5, ArrayType(VectorType(Float, 8), 3))
    assert lit.value == 0.5
    program = fun([ArrayType(Float, 2)], lambda x: Map(lambda v: v)(Literal(2.0, ArrayType(VectorType(Float, 4), 3))))
    np.testing.assert_array_equal(interpret(program, np.zeros(2, np.float32)), np.full((3, 4), 2.0, np.float32))


@needs_device
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("m, n", [(16, 40), (8, 20), (12, 256), (64, 1024), (25, 40), (15, 19), (35, 99)])
def test_blocked_rows_agree_with_numpy_on_the_device(name, m, n):
    inputs = _inputs(name, np.random.default_rng(m * n), m, n)
    program = PROGRAMS[name]
    assert "toPrivate(reduce-seq(" in paper(lower(program, {"M": m, "N": n}))
    got = lift.compile(program, sizes={"M": m, "N": n}, lowering="default")(*inputs)
    np.testing.assert_allclose(np.asarray(got).reshape(m), REFERENCES[name](*inputs), rtol=1e-5, atol=1e-5)
