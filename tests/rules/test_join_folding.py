"""`zip-join`, `map-join`, `reduce-join` (`lift.rules.join_folding`): each rule against the interpreter on random
sizes, operators and data (Hypothesis), and the three together on the 2-D Jacobi stencil of `examples/jacobi.py`."""

import sys
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lift import ArrayType, Float, Join, Map, Reduce, ReduceSeq, Zip, fun, infer, interpret, paper
from lift.rules import RewriteEngine

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from blas import add, mult, neg  # noqa: E402
from jacobi import jacobi2d  # noqa: E402

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
ENGINE = RewriteEngine()
MATRIX = st.tuples(st.integers(1, 5), st.integers(1, 5), st.integers(0, 1 << 16))


def _rand(rng, *shape):
    return rng.integers(-4, 5, shape).astype(np.float32) / 2


def _places(program, rule):
    return [rw for rw in ENGINE.rewrites(program) if rw.rule == rule]


def _rewritten(program, rule):
    places = _places(program, rule)
    assert places, f"{rule} does not apply to {paper(program)}"
    new = ENGINE.apply(program, places[0])
    assert infer(new).type == infer(program).type
    return new


@SETTINGS
@given(MATRIX)
def test_zip_join_zips_rows(shape):
    m, n, seed = shape
    rng = np.random.default_rng(seed)
    a, b = _rand(rng, m, n), _rand(rng, m, n)
    matrix = ArrayType(ArrayType(Float, n), m)
    program = fun([matrix, matrix], lambda x, y: Map(mult)(Zip(Join()(x), Join()(y))))
    new = _rewritten(program, "zip-join")
    assert paper(new).count("join") == 1
    np.testing.assert_array_equal(interpret(new, a, b), a.ravel() * b.ravel())


def test_zip_join_needs_rows_of_equal_length():
    program = fun([ArrayType(ArrayType(Float, 2), 3), ArrayType(ArrayType(Float, 3), 2)],
                  lambda x, y: Map(mult)(Zip(Join()(x), Join()(y))))
    assert not _places(program, "zip-join")


@SETTINGS
@given(MATRIX)
def test_map_join_maps_rows(shape):
    m, n, seed = shape
    a = _rand(np.random.default_rng(seed), m, n)
    program = fun([ArrayType(ArrayType(Float, n), m)], lambda x: Map(neg)(Join()(x)))
    new = _rewritten(program, "map-join")
    assert paper(new).startswith("join ∘ map(map(neg))")
    np.testing.assert_array_equal(interpret(new, a), -a.ravel())


@SETTINGS
@given(MATRIX, st.sampled_from([(add, 0.0, np.sum), (mult, 1.0, np.prod)]))
def test_reduce_join_reduces_rows_first(shape, monoid):
    m, n, seed = shape
    op, z, reference = monoid
    a = _rand(np.random.default_rng(seed), m, n)
    program = fun([ArrayType(ArrayType(Float, n), m)], lambda x: Reduce(op, z)(Join()(x)))
    places = _places(program, "reduce-join")
    if n == 1:
        assert not places, "a row of one element is already reduced"
        return
    new = ENGINE.apply(program, places[0])
    assert infer(new).type == infer(program).type
    assert paper(new) == f"reduce({op.name}, {z}) ∘ join ∘ map(reduce({op.name}, {z}))"
    assert not _places(new, "reduce-join"), "the rule does not apply to its own result (rows of one)"
    np.testing.assert_allclose(interpret(new, a), [reference(a)], rtol=1e-5)


def test_reduce_join_needs_an_associative_operator():
    program = fun([ArrayType(ArrayType(Float, 3), 2)], lambda x: ReduceSeq(add, 0.0)(Join()(x)))
    assert not _places(program, "reduce-join")


def test_the_rules_fold_the_2d_jacobi_window_row_by_row():
    rng = np.random.default_rng(0)
    a, k = _rand(rng, 6, 5), _rand(rng, 3, 3)
    program = jacobi2d
    for rule in ("zip-join", "map-join", "reduce-join"):
        program = _rewritten(program, rule)
    assert "reduce(add, 0.0) ∘ join ∘ map(reduce(add, 0.0)) ∘ map(map(mult))" in paper(program)
    np.testing.assert_allclose(interpret(program, a, k), interpret(jacobi2d, a, k), rtol=1e-5)
