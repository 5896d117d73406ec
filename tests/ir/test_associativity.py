"""Which reduce operators lift may re-associate (lift.ir.associativity), `reduce` of `(A, T) -> A` refused with a
pointer to ReduceSeq, and a fold with `Reduce` whose operator is not associative meaning `reduce-seq` (issue 17,
item 7): an N-body-style fold `acc + pair_force(p, q)` agrees with numpy."""

import numpy as np
import pytest

import lift
from lift import (ArrayType, Float, Int, Map, Reduce, ReduceSeq, SizeVar, UserFun, VectorType, Vectorize, fun,
                  userfun)
from lift.errors import LiftTypeError
from lift.ir.associativity import is_associative
from lift.ir.nodes import Param

from userfuns import add, maxf, pair_force

N = SizeVar("N")
Float4 = VectorType(Float, 4)


@userfun
def mult(a: Float, b: Float) -> Float:
    return b * a


@userfun
def sub(x: Float, y: Float) -> Float:
    return x - y


@userfun
def add_twice(x: Float, y: Float) -> Float:
    return x + y + y


@userfun(associative=True)
def hypot_sum(x: Float, y: Float) -> Float:
    return x + y


def test_known_operators_are_associative():
    c_add = UserFun("c_add", ("a", "b"), "return a + b;", (Float, Float), Float)
    c_max = UserFun("c_max", ("a", "b"), "return fmax(b, a);", (Float, Float), Float)
    x, y = Param("x", Float), Param("y", Float)
    dsl_add = (x + y).f
    for op in (add, mult, maxf, hypot_sum, c_add, c_max, dsl_add, Vectorize(4, add)):
        assert is_associative(op), op
    assert is_associative(lift.fun(lambda a, b: add(b, a)))


def test_other_operators_are_not():
    c_sub = UserFun("c_sub", ("a", "b"), "return a - b;", (Float, Float), Float)
    c_mixed = UserFun("c_mixed", ("a", "b"), "return a + b;", (Float, Int), Float)
    for op in (sub, add_twice, c_sub, c_mixed, lift.fun(lambda acc, q: add(acc, pair_force(acc, q)))):
        assert not is_associative(op), op


def test_declaring_a_function_that_is_not_t_t_to_t_associative_is_refused():
    with pytest.raises(LiftTypeError, match="declared associative, so its type must be \\(T, T\\) -> T"):
        UserFun("scale", ("a", "k"), "return a * k;", (Float, Int), Float, associative=True)


def test_reduce_with_an_accumulator_of_another_type_points_to_reduce_seq():
    @userfun
    def count_positive(acc: Int, v: Float) -> Int:
        return acc + 1 if v > 0.0 else acc

    with pytest.raises(LiftTypeError, match=r"reduce\(count_positive, 0\) needs an associative operator of type "
                                            r"\(T, T\) -> T, got one of type \(Int, Float\) -> Int \(at body.f\)"
                                            r".*written with ReduceSeq"):
        fun([ArrayType(Float, N)], lambda x: Reduce(count_positive, 0)(x))
    counted = fun([ArrayType(Float, N)], lambda x: ReduceSeq(count_positive, 0)(x))
    x = np.array([1.0, -2.0, 3.0, 0.5], np.float32)
    assert lift.interpret(counted, x).tolist() == [3]


def n_body_fold():
    """All-pairs accelerations written as a fold with `Reduce`: `acc + pair_force(p, q)` is (float, float) -> float, but
    not associative (`pair_force(p, q)` of two accumulators means nothing)."""
    return fun([ArrayType(Float, N)],
               lambda x: Map(lambda p: Reduce(lambda acc, q: add(acc, pair_force(p, q)), 0.0)(x))(x))


def n_body_reference(x):
    d = x[None, :].astype(np.float64) - x[:, None]
    return (d / (1.0 + d * d)).sum(axis=1)


def test_a_reduce_of_a_non_associative_operator_means_reduce_seq_in_the_interpreter():
    x = np.random.default_rng(3).uniform(-1, 1, 300).astype(np.float32)
    np.testing.assert_allclose(np.asarray(lift.interpret(n_body_fold(), x))[:, 0], n_body_reference(x),
                               rtol=1e-4, atol=1e-4)
