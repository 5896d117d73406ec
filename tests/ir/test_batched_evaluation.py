"""The interpreter's fast paths against numpy and against its own element-by-element meaning: reductions by
ufuncs, `reduce(+) ∘ map(*) ∘ zip` as a contraction, folds split into a map and a reduction, and maps
evaluated in chunks (all-pairs N-body, matrix multiply)."""

import tracemalloc

import numpy as np
import pytest

import lift.ir.interpreter as interpreter
from lift import (ArrayType, Float, Get, Int, Join, Map, Reduce, ReduceSeq, SizeVar, Transpose, VectorType, Vectorize,
                  Zip, fun, interpret, userfun)
from lift.ir.contraction import contract, reduce_axis
from lift.ir.operators import operator_userfun
from lift.ir.ufuncs import multiplies_pair, split_accumulation, ufunc_of
from numpy_references import nbody
from userfuns import add, maxf, mult

RNG = np.random.default_rng(17)
N, M, K = SizeVar("N"), SizeVar("M"), SizeVar("K")
Float4 = VectorType(Float, 4)


@userfun
def add_swapped(x: Float, y: Float) -> Float:
    return y + x


@userfun
def least(x: Int, y: Int) -> Int:
    return min(x, y)


@userfun
def sub(x: Float, y: Float) -> Float:
    return x - y


@userfun
def add_one(x: Float, y: Float) -> Float:
    return x + y + 1.0


@userfun
def first(x: Float, y: Float) -> Float:
    return x + x


@userfun
def pull(p: Float, q: Float) -> Float:
    return (q - p) / (1.0 + (q - p) * (q - p))


@userfun
def pull_into(acc: Float, p: Float, q: Float) -> Float:
    return acc + (q - p) / (1.0 + (q - p) * (q - p))


def _f32(*shape):
    return RNG.uniform(-1, 1, shape).astype(np.float32)


@pytest.fixture
def small_chunks(monkeypatch):
    """Chunks of 256 batch elements, so that small programs run in many chunks."""
    monkeypatch.setattr(interpreter, "CHUNK_ELEMENTS", 256)


# --- which functions are ufuncs ----------------------------------------------------------------------------


def test_user_functions_that_are_ufuncs():
    assert ufunc_of(add) is np.add and ufunc_of(add_swapped) is np.add and ufunc_of(mult) is np.multiply
    assert ufunc_of(maxf) is np.fmax and ufunc_of(least) is np.fmin
    assert ufunc_of(operator_userfun("add", Float)) is np.add and ufunc_of(operator_userfun("mul", Int)) is np.multiply
    assert ufunc_of(Vectorize(4, add)) is np.add
    assert ufunc_of(fun(lambda a, b: add(b, a))) is np.add
    assert ufunc_of(fun(lambda a, b: a + b)) is np.add


@pytest.mark.parametrize("f", [sub, add_one, first, pull, operator_userfun("sub", Float),
                               operator_userfun("div", Float), operator_userfun("lt", Float)])
def test_user_functions_that_are_not(f):
    assert ufunc_of(f) is None


def test_lambdas_that_are_not_ufuncs():
    assert ufunc_of(fun(lambda a, b: add(a, a))) is None
    assert ufunc_of(fun(lambda a, b: add(a, add(a, b)))) is None


def test_multiplying_a_pair():
    assert multiplies_pair(mult) and multiplies_pair(fun(lambda xy: mult(Get(xy, 1), Get(xy, 0))))
    assert not multiplies_pair(add) and not multiplies_pair(fun(lambda xy: mult(Get(xy, 0), Get(xy, 0))))


def test_split_accumulation():
    u, g = split_accumulation(fun(lambda acc, q: add(acc, pull(1.0, q))))
    assert u is np.add and g.params[0].name == "q"
    assert split_accumulation(fun(lambda acc, q: add(pull(acc, q), acc))) is None
    assert split_accumulation(fun(lambda acc, q: add(acc, acc))) is None
    assert split_accumulation(fun(lambda acc, q: sub(acc, q))) is None
    assert split_accumulation(pull_into) is None


# --- contractions and sums --------------------------------------------------------------------------------


@pytest.mark.parametrize("case", ["matmul", "gemv", "lanes", "both-broadcast", "plain"])
def test_contraction_of_broadcast_operands(case):
    if case == "matmul":
        a = np.broadcast_to(_f32(5, 1, 7), (5, 6, 7))
        b = np.broadcast_to(_f32(1, 6, 7), (5, 6, 7))
    elif case == "gemv":
        a, b = _f32(5, 7), np.broadcast_to(_f32(7), (5, 7))
    elif case == "lanes":
        a = np.broadcast_to(_f32(5, 1, 7, 4), (5, 6, 7, 4))
        b = np.broadcast_to(_f32(1, 6, 7, 4), (5, 6, 7, 4))
    elif case == "both-broadcast":
        a = np.broadcast_to(_f32(1, 7), (5, 7))
        b = np.broadcast_to(_f32(1, 7), (5, 7))
    else:
        a, b = _f32(3, 7, 2), _f32(3, 7, 2)
    axis = 1 if case in ("gemv", "both-broadcast", "plain") else 2
    got = contract(a, b, axis)
    want = (a.astype(np.float64) * b).sum(axis)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_contraction_refuses_operands_of_two_shapes():
    with pytest.raises(ValueError, match="shapes"):
        contract(_f32(3, 4), _f32(4, 3), 0)


@pytest.mark.parametrize("u", [np.add, np.multiply, np.fmax])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_reduce_axis(u, axis):
    a = _f32(6, 5, 4)
    np.testing.assert_allclose(reduce_axis(u, a, axis), u.reduce(a, axis=axis), rtol=1e-6)
    ints = RNG.integers(-50, 50, (6, 5, 4)).astype(np.int32)
    np.testing.assert_array_equal(reduce_axis(u, ints, axis), u.reduce(ints, axis=axis))


# --- programs ----------------------------------------------------------------------------------------------


matmul = fun([ArrayType(ArrayType(Float, K), M), ArrayType(ArrayType(Float, N), K)],
             lambda A, B: Map(lambda a: Map(lambda b: (Reduce(add, 0.0) @ Map(mult))(Zip(a, b)))(Transpose()(B)))(A))


@pytest.mark.parametrize("m, k, n", [(1, 1, 1), (37, 19, 23), (64, 64, 64)])
def test_matmul(m, k, n):
    A, B = _f32(m, k), _f32(k, n)
    got = interpret(matmul, A, B)
    assert got.shape == (m, n, 1) and got.dtype == np.float32
    np.testing.assert_allclose(got[..., 0], A.astype(np.float64) @ B, rtol=1e-5, atol=1e-5)


def test_matmul_makes_no_array_of_every_product():
    """At 256^3 the products would take 64 MB; the contraction needs the inputs and the result (under 2 MB)."""
    A, B = _f32(256, 256), _f32(256, 256)
    tracemalloc.start()
    try:
        interpret(matmul, A, B)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20


def test_matmul_with_the_products_written_as_a_lambda_over_pairs():
    program = fun([ArrayType(ArrayType(Float, K), M), ArrayType(Float, K)],
                  lambda A, x: Map(lambda row: ReduceSeq(lambda s, v: s + v, 1.5)(
                      Map(lambda p: Get(p, 0) * Get(p, 1))(Zip(row, x))))(A))
    A, x = _f32(9, 13), _f32(13)
    np.testing.assert_allclose(interpret(program, A, x)[:, 0], 1.5 + A.astype(np.float64) @ x, rtol=1e-5, atol=1e-5)


def test_reductions_by_max_and_min():
    x = _f32(1000)
    assert interpret(fun([ArrayType(Float, N)], lambda v: Reduce(maxf, -10.0)(v)), x)[0] == x.max()
    ints = RNG.integers(-1000, 1000, 999).astype(np.int32)
    assert interpret(fun([ArrayType(Int, N)], lambda v: ReduceSeq(least, 0)(v)), ints)[0] == min(ints.min(), 0)


all_pairs = fun([ArrayType(Float, N)], lambda x: Join()(Map(lambda p: Reduce(add, 0.0)(Map(lambda q: pull(p, q))(x)))(x)))
all_pairs_fold = fun([ArrayType(Float, N)],
                     lambda x: Join()(Map(lambda p: ReduceSeq(lambda acc, q: add(acc, pull(p, q)), 0.0)(x))(x)))
all_pairs_sequential = fun([ArrayType(Float, N)],
                           lambda x: Join()(Map(lambda p: ReduceSeq(lambda acc, q: pull_into(acc, p, q), 0.0)(x))(x)))


def _all_pairs(x):
    d = x[None, :].astype(np.float64) - x[:, None]
    return (d / (1.0 + d * d)).sum(1)


@pytest.mark.parametrize("program", [all_pairs, all_pairs_fold, all_pairs_sequential])
@pytest.mark.parametrize("n", [1, 77, 300])
def test_all_pairs(program, n, small_chunks):
    x = _f32(n)
    np.testing.assert_allclose(interpret(program, x), _all_pairs(x), rtol=1e-4, atol=1e-4)


def test_chunks_of_a_map_agree_with_one_batch(monkeypatch):
    x = _f32(301)
    whole = interpret(all_pairs, x)
    monkeypatch.setattr(interpreter, "CHUNK_ELEMENTS", 100)
    np.testing.assert_allclose(interpret(all_pairs, x), whole, rtol=1e-6)


@pytest.mark.parametrize("n", [3, 200, 1000])
def test_nbody(examples, n, small_chunks):
    pf = examples["nbody"]
    inputs = pf.inputs("nbody", {"N": n}, seed=5)
    got = interpret(pf.kernels["nbody"], *inputs)
    assert got.shape == (n,) and got.dtype.names == ("_0", "_1")
    position, velocity = nbody(*inputs)
    np.testing.assert_allclose(got["_0"], position, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got["_1"], velocity, rtol=1e-4, atol=1e-4)


def test_nbody_evaluates_in_chunks(examples, monkeypatch):
    """N = 2048: every pair's float4 acceleration takes 64 MB (192 MB at the peak in one batch); chunks of
    2^16 pairs take 1 MB each."""
    monkeypatch.setattr(interpreter, "CHUNK_ELEMENTS", 1 << 16)
    pf = examples["nbody"]
    inputs = pf.inputs("nbody", {"N": 2048}, seed=6)
    tracemalloc.start()
    try:
        got = interpret(pf.kernels["nbody"], *inputs)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20
    np.testing.assert_allclose(got["_1"], nbody(*inputs)[1], rtol=1e-4, atol=1e-4)


def test_matmul_example(examples):
    pf = examples["matmul"]
    A, B = pf.inputs("matmul", {"M": 33, "K": 65, "N": 17}, seed=8)
    np.testing.assert_allclose(interpret(pf.kernels["matmul"], A, B)[..., 0], A.astype(np.float64) @ B,
                               rtol=1e-5, atol=1e-5)


def test_a_rows_value_read_inside_inner_maps_is_computed_once_per_row(examples, monkeypatch):
    """Attention as a new user writes it (`examples/attention.py`): a query row's scores are read by their maximum
    inside the map over the scores and by the weights inside the map over V's columns; each structurally distinct
    use is computed once per evaluation of the map over rows, not once per inner use (95 s at S = 257 before,
    0.7 s after), and the result is numpy's."""
    pf = examples["attention"]
    calls = []
    monkeypatch.setattr(interpreter, "contract", lambda a, b, axis: calls.append(a.shape) or contract(a, b, axis))
    inputs = pf.inputs("attention", {"S": 24, "D": 7}, seed=2)
    got = interpret(pf.kernels["attention"], *inputs)
    np.testing.assert_allclose(got, pf.namespace["reference"](*inputs), rtol=1e-5, atol=1e-6)
    assert calls.count((24, 24, 7)) <= 3 and len(calls) <= 4, calls
