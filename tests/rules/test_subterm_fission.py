"""Map fission of a subterm (`map-subterm-fission`, lift.rules.subterm_fission): a fold inside a user function's
argument mapped on its own before the map. Every rewrite against the interpreter on random sizes, data and
programs (Hypothesis); where the default lowering and the search split folds off; on the device against numpy."""

import re

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lift
from lift import ArrayType, Float, Get, Map, Reduce, SizeVar, Transpose, Zip, fun, infer, interpret, paper, userfun
from lift.rules import Rewrite, RewriteEngine, RuleNotApplicable
from lift.rules.default_lowering import default_lowering, lower

from opencl_device import needs_device
from userfuns import add, maxf, mult

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
M, N = SizeVar("M"), SizeVar("N")
MATRIX = ArrayType(ArrayType(Float, N), M)


@userfun
def bias_relu(s: ArrayType(Float, 1), b: Float) -> Float:
    return max(s[0] + b, 0.0)


@userfun
def plus_sum(x: Float, s: ArrayType(Float, 1)) -> Float:
    return x + s[0]


@userfun
def axpby(a: Float, ax: ArrayType(Float, 1), b: Float, bx: ArrayType(Float, 1)) -> Float:
    return a * ax[0] + b * bx[0]


@userfun
def scaled_by_max(s: ArrayType(Float, 1), top: ArrayType(Float, 1)) -> Float:
    return s[0] * top[0]


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


PROGRAMS = {
    # relu(A x + b): the fold reads the zip's first component
    "gemv_relu": fun([MATRIX, ArrayType(Float, N), ArrayType(Float, M)], lambda A, x, b: Map(
        lambda rb: bias_relu(dot(Get(rb, 0), x), Get(rb, 1)))(Zip(A, b))),
    # mvt's x + Aᵀ y: a fold over the columns of the matrix
    "mvt_columns": fun([MATRIX, ArrayType(Float, N), ArrayType(Float, M)], lambda A, x, y: Map(
        lambda xc: plus_sum(Get(xc, 0), dot(Get(xc, 1), y)))(Zip(x, Transpose()(A)))),
    # gesummv: two folds, one per component
    "gesummv": fun([Float, Float, MATRIX, MATRIX, ArrayType(Float, N)], lambda a, b, A, B, x: Map(
        lambda ab: axpby(a, dot(Get(ab, 0), x), b, dot(Get(ab, 1), x)))(Zip(A, B))),
    # the row read by two folds: the first split off into a new last component, the row kept for the second
    "row_twice": fun([MATRIX, ArrayType(Float, N), ArrayType(Float, M)], lambda A, x, b: Map(
        lambda rb: scaled_by_max(dot(Get(rb, 0), x), Reduce(maxf, float("-inf"))(Get(rb, 0))))(Zip(A, b))),
    # no zip: the row itself, a value free in the map beside it
    "no_zip": fun([MATRIX, ArrayType(Float, N), Float], lambda A, x, c: Map(
        lambda row: bias_relu(dot(row, x), c))(A)),
}
REFERENCES = {
    "gemv_relu": lambda A, x, b: np.maximum(A.astype(np.float64) @ x + b, 0),
    "mvt_columns": lambda A, x, y: x + A.T.astype(np.float64) @ y,
    "gesummv": lambda a, b, A, B, x: a * (A.astype(np.float64) @ x) + b * (B.astype(np.float64) @ x),
    "row_twice": lambda A, x, b: (A.astype(np.float64) @ x) * A.max(axis=1),
    "no_zip": lambda A, x, c: np.maximum(A.astype(np.float64) @ x + c, 0),
}


def _inputs(name, rng, m, n):
    """Halves of small integers: every sum and product of them here is exact in float32, whatever its order."""
    def rand(*shape):
        return rng.integers(-4, 5, shape).astype(np.float32) / 2
    return {"gemv_relu": lambda: [rand(m, n), rand(n), rand(m)],
            "mvt_columns": lambda: [rand(m, n), rand(n), rand(m)],
            "gesummv": lambda: [np.float32(1.5), np.float32(-0.5), rand(m, n), rand(m, n), rand(n)],
            "row_twice": lambda: [rand(m, n), rand(n), rand(m)],
            "no_zip": lambda: [rand(m, n), rand(n), np.float32(0.5)]}[name]()


def _fissions(program, engine):
    return [rw for rw in engine.rewrites(program) if rw.rule == "map-subterm-fission"]


def _split_all(program, engine):
    """Every fold split off, one rewrite after another, the programs of each step."""
    steps = [program]
    while _fissions(steps[-1], engine):
        steps.append(engine.apply(steps[-1], _fissions(steps[-1], engine)[0]))
    return steps


@SETTINGS
@given(st.sampled_from(sorted(PROGRAMS)), st.integers(1, 9), st.integers(1, 9), st.integers(0, 1 << 16))
def test_every_subterm_fission_means_what_the_program_means(name, m, n, seed):
    engine = RewriteEngine(sizes={"M": m, "N": n})
    inputs = _inputs(name, np.random.default_rng(seed), m, n)
    program = PROGRAMS[name]
    expected = np.asarray(interpret(program, *inputs)).reshape(m if name != "mvt_columns" else n)
    np.testing.assert_array_equal(expected, REFERENCES[name](*inputs).astype(np.float32))
    rewritten = [engine.apply(program, rw) for rw in _fissions(program, engine)] + _split_all(program, engine)[1:]
    assert rewritten
    for p in rewritten:
        assert infer(p).type == infer(program).type
        np.testing.assert_array_equal(np.asarray(interpret(p, *inputs)).reshape(expected.shape), expected)


def test_the_fold_is_mapped_over_the_component_it_reads():
    engine = RewriteEngine()
    split = engine.apply(PROGRAMS["gemv_relu"], _fissions(PROGRAMS["gemv_relu"], engine)[0])
    assert re.sub(r"_\d+", "", paper(split)) == (
        "λ A, x, b. map(λ rb. bias_relu(get-0(rb), get-1(rb))) ∘ zip(map(λ q. reduce(add, 0.0) ∘ map(mult) ∘ "
        "zip(q, x))(A), b)")


def test_a_component_read_elsewhere_too_is_kept_and_the_fold_zipped_after_it():
    engine = RewriteEngine()
    steps = _split_all(PROGRAMS["row_twice"], engine)
    assert re.sub(r"_\d+", "", paper(steps[1])) == (
        "λ A, x, b. map(λ rb. scaled_by_max(get-2(rb), reduce(maxf, -inf) ∘ get-0(rb))) ∘ zip(A, b, map(λ q. "
        "reduce(add, 0.0) ∘ map(mult) ∘ zip(q, x))(A))")
    assert len(steps) == 3 and "zip(map(" in paper(steps[2])


def test_the_element_itself_is_split_where_no_zip_is():
    engine = RewriteEngine()
    split = engine.apply(PROGRAMS["no_zip"], _fissions(PROGRAMS["no_zip"], engine)[0])
    assert re.sub(r"_\d+", "", paper(split)) == (
        "λ A, x, c. map(λ v. bias_relu(v, c)) ∘ map(λ q. reduce(add, 0.0) ∘ map(mult) ∘ zip(q, x))(A)")


@pytest.mark.parametrize("why, program", [
    ("a fold on the spine: map-fission's", fun([MATRIX, ArrayType(Float, N)], lambda A, x: Map(
        lambda row: Map(lambda v: mult(v, 2.0))(dot(row, x)))(A))),
    ("a fold reading a value bound inside the function", fun([MATRIX, ArrayType(Float, M)], lambda A, b: Map(
        lambda r: Map(lambda c: plus_sum(c, Reduce(add, 0.0)(Map(lambda v: mult(v, c))(r))))(b))(A))),
    ("the whole element read beside the fold", fun([MATRIX, ArrayType(Float, N)], lambda A, x: Map(
        lambda row: scaled_by_max(dot(row, x), Reduce(maxf, float("-inf"))(row)))(A))),
])
def test_no_fission_where_the_fold_cannot_leave_the_function(why, program):
    assert not _fissions(program, RewriteEngine()), why
    with pytest.raises(RuleNotApplicable, match=r"map-subterm-fission: parameters \{at=0\} do not apply here"):
        RewriteEngine().apply(program, Rewrite.of("map-subterm-fission", "body", {"at": 0}))


def _steps(program, sizes, **kw):
    return [s.rule for s in default_lowering(program, sizes, **kw).steps]


@pytest.mark.parametrize("name, sizes, split", [
    ("gemv_relu", {"M": 64, "N": 40}, True), ("gemv_relu", {"M": 63, "N": 40}, True),
    ("gemv_relu", {"M": 17, "N": 40}, False),
    ("mvt_columns", {"M": 40, "N": 48}, True), ("mvt_columns", {"M": 40, "N": 53}, True),
    ("mvt_columns", {"M": 8, "N": 53}, False),
    ("gesummv", {"M": 16, "N": 32}, True), ("no_zip", {"M": 16, "N": 32}, True)])
def test_the_default_lowering_splits_a_fold_off_where_its_map_is_then_blocked(name, sizes, split):
    """Rows in blocks of 4 where 4 divides them or padding them to a multiple of 4 adds at most an eighth (63 rows,
    not 17: step 3b), columns in blocks of 8 to 64 (padded where none divides them) where there are 16 rows or
    more (step 1a); elsewhere the fold stays, a work-item folding a row or column."""
    lowered = paper(lower(PROGRAMS[name], sizes))
    assert ("map-subterm-fission" in _steps(PROGRAMS[name], sizes)) == split
    assert ("toPrivate(reduce-seq(" in lowered or "transpose ∘ map(split-" in lowered) == split


def test_the_default_lowering_splits_no_fold_where_vectors_do_not_pay_or_rows_are_not_blocked():
    sizes = {"M": 64, "N": 40}
    assert "map-subterm-fission" not in _steps(PROGRAMS["gemv_relu"], sizes, vector_width=1)
    assert "map-subterm-fission" not in _steps(PROGRAMS["gemv_relu"], sizes, row_block=1)


@pytest.mark.parametrize("name, m, n", [("gemv_relu", 64, 40), ("mvt_columns", 40, 48), ("gesummv", 16, 32),
                                        ("row_twice", 32, 24), ("no_zip", 16, 32), ("gemv_relu", 63, 41)])
def test_the_default_lowering_means_what_the_program_means(name, m, n):
    inputs = _inputs(name, np.random.default_rng(m * n), m, n)
    expected = REFERENCES[name](*inputs)
    got = interpret(lower(PROGRAMS[name], {"M": m, "N": n}), *inputs)
    np.testing.assert_array_equal(np.asarray(got).reshape(expected.shape), expected.astype(np.float32))


def test_the_search_proposes_the_folds_split_off_and_whole():
    from lift.explore.rewrite_search import RewriteSearch

    search = RewriteSearch(PROGRAMS["mvt_columns"], {"M": 40, "N": 53}, patience=5)
    proposed = {c.params.get("fission") for c, _ in zip(search, range(30))}
    assert {"split()", "whole()"} <= proposed


@needs_device
@pytest.mark.parametrize("name", sorted(PROGRAMS))
@pytest.mark.parametrize("m, n", [(64, 40), (63, 41), (1004, 999), (96, 1003)])
def test_split_folds_agree_with_numpy_on_the_device(name, m, n):
    inputs = _inputs(name, np.random.default_rng(m + n), m, n)
    got = lift.compile(PROGRAMS[name], sizes={"M": m, "N": n}, lowering="default")(*inputs)
    expected = REFERENCES[name](*inputs)
    np.testing.assert_allclose(np.asarray(got).reshape(expected.shape), expected, rtol=1e-5, atol=1e-4)
