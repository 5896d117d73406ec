"""The price of a user function's body (`lift.explore.userfun_cost`): its operations by the lanes they work on, and
its dependency chain from a parameter to its result; and how the cost model (`lift.explore.cost_model`) charges a
sequential reduction's steps by the longer of their operations' issue and their accumulator's chain (predictions
only, on constructed kernels)."""

import math

import pytest

from lift import ArrayType, Float, MapGlb, ReduceSeq, SizeVar, UserFun, VectorType, Vectorize, fun, userfun
from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import profile
from lift.explore.userfun_cost import (DIVIDE_OPS, LOOP_OPS, MATH_CALL_OPS, SQRT_OPS, chain, operations,
                                      transcendental)

Float8, Float16 = VectorType(Float, 8), VectorType(Float, 16)
M, K = SizeVar("M"), SizeVar("K")
CPU = DeviceModel.for_device("cpu", 2, 20.0, 0.002, 32768, 4096, 8, 32 << 20)


@userfun
def ratio_sum(x: Float, y: Float) -> Float:
    return x * y + x / y


@userfun
def softened(x: Float) -> Float:
    return math.sqrt(x * x + 0.01)


@userfun
def growth(x: Float) -> Float:
    return math.exp(x) + 1.0


@userfun
def add(acc: Float, x: Float) -> Float:
    return acc + x


@userfun
def add_power(acc: Float, x: Float) -> Float:
    return acc + x * x * x * x * x


@userfun
def horner(acc: Float, x: Float, unused: Float) -> Float:
    return ((acc * x + 1.0) * x + 2.0) * x + 3.0


@userfun
def add_thrice(acc: Float, x: Float) -> Float:
    for _ in range(3):
        acc = acc + x
    return acc


@userfun
def clipped(acc: Float, x: Float) -> Float:
    if x > 0.0:
        acc = acc + x * x
    else:
        acc = acc - x
    return acc


@userfun
def heavy1(acc: Float, x: Float) -> Float:
    return acc + ((x * x + 1.0) * (x * 0.5 + 2.0) * (x * x * x + 3.0) + x / (x * x + 4.0))


@userfun
def heavy8(acc: Float8, x: Float8) -> Float8:
    return acc + ((x * x + 1.0) * (x * 0.5 + 2.0) * (x * x * x + 3.0) + x / (x * x + 4.0))


@userfun
def heavy16(acc: Float16, x: Float16) -> Float16:
    return acc + ((x * x + 1.0) * (x * 0.5 + 2.0) * (x * x * x + 3.0) + x / (x * x + 4.0))


def test_operations_weigh_divisions_sqrt_and_transcendental_calls():
    assert operations(ratio_sum) == {1: 2 + DIVIDE_OPS}
    assert operations(softened) == {1: 2 + SQRT_OPS}
    assert operations(growth) == {1: MATH_CALL_OPS + 1}
    assert operations(add_thrice) == {1: 3 + 3 * LOOP_OPS}
    assert operations(UserFun("twice", ("x",), "return 2.0f * x;", (Float,), Float)) == {1: 1}
    assert transcendental(growth) and not transcendental(softened) and not transcendental(ratio_sum)


def test_operations_count_the_lanes_of_vector_values_and_of_vectorised_applications():
    """An operation on a vector counts once, at its width: the model turns that into one instruction per native
    vector (two for 16 lanes on AVX2's 8), not one per lane."""
    assert operations(heavy8) == {8: sum(operations(heavy1).values())}
    assert operations(heavy16) == {16: sum(operations(heavy1).values())}
    assert operations(Vectorize(8, ratio_sum)) == {8: 2 + DIVIDE_OPS}


@userfun
def window_sum(w: ArrayType(Float, 9)) -> Float:
    s = 0.0
    for i in range(3):
        for j in range(3):
            s += w[i * 3 + j]
    return s


@userfun
def window_sum_unrolled(w: ArrayType(Float, 9)) -> Float:
    return w[0] + w[1] + w[2] + w[3] + w[4] + w[5] + w[6] + w[7] + w[8]


def test_a_rolled_loop_costs_its_counting_and_index_arithmetic_once_whatever_the_lanes():
    """A loop left rolled in a body costs `LOOP_OPS` an iteration and its counters' index arithmetic (`i * 3 + j`,
    an integer multiply and add) an operation each, in scalar code however many lanes `vectorize-n` gives the
    values; the sums run at the lanes' width, as unrolled."""
    iterations, index_ops = 3 + 9, 2 * 9
    assert operations(window_sum_unrolled) == {1: 8}
    assert operations(window_sum) == {1: 9 + LOOP_OPS * iterations + index_ops}
    assert operations(Vectorize(16, window_sum)) == {16: 9, 1: LOOP_OPS * iterations + index_ops}
    assert operations(Vectorize(16, window_sum_unrolled)) == {16: 8}


def test_chain_is_the_longest_path_from_a_parameter_to_the_result():
    assert chain(add, 0) == chain(add_power, 0) == 1
    assert chain(add_power, 1) == 5
    assert chain(horner, 0) == chain(horner, 1) == 6 and chain(horner, 2) == 0
    assert chain(add_thrice, 0) == 3 and chain(add_thrice, 1) == 3
    assert chain(clipped, 0) == 1 and chain(clipped, 1) == 2
    assert chain(ratio_sum, 1) == DIVIDE_OPS + 1
    assert chain(UserFun("twice", ("x",), "return 2.0f * x;", (Float,), Float), 0) == 1


def test_no_chain_is_longer_than_the_operations(examples):
    """Over every user function of the examples: a chain holds at most all of the body's operations."""
    seen = 0
    for pf in examples.values():
        for f in pf.namespace.values():
            if isinstance(f, UserFun):
                total = sum(operations(f).values())
                for k in range(len(f.param_names)):
                    assert 0 <= chain(f, k) <= total, (f.name, k)
                seen += 1
    assert seen > 50


def _rows(step, t=Float, init=0.0):
    """`M` work-items, each folding its row of `K` values of type `t` with `step`."""
    return fun([ArrayType(ArrayType(t, K), M)], lambda xs: MapGlb(lambda row: ReduceSeq(step, init)(row))(xs))


def _predicted(program, sizes, device=CPU):
    return predict(profile(Candidate(program).generate("k", sizes)), device)


def test_a_reduction_step_takes_its_accumulator_chain_however_few_its_operations():
    """A step waits for the previous one's accumulator: its independent operations issue meanwhile (on PoCL, one
    core adds a float per 1.0 ns and multiply-adds two per 1.4 ns, both the chain's latency), and only a longer
    chain (Horner's rule: six operations from the accumulator) takes longer."""
    sizes = {"M": 64, "K": 1 << 14}
    plain = _predicted(_rows(add), sizes)
    assert _predicted(_rows(add_power), sizes) == pytest.approx(plain, rel=0.01)
    assert 5 < _predicted(_rows(lambda acc, x: horner(acc, x, x)), sizes) / plain < 7


def test_vector_steps_cost_an_instruction_per_native_vector():
    """A step on float8s does eight scalar steps' arithmetic in the instructions of one (AVX2); float16s take two
    instructions for each of their operations, as fast per element as float8s."""
    n = 1 << 14
    scalar = _predicted(_rows(heavy1), {"M": 64, "K": n})
    lanes8 = _predicted(_rows(heavy8, Float8, Vectorize(8, 0.0)), {"M": 64, "K": n // 8})
    lanes16 = _predicted(_rows(heavy16, Float16, Vectorize(16, 0.0)), {"M": 64, "K": n // 16})
    assert scalar > 6 * lanes8
    assert lanes16 == pytest.approx(lanes8, rel=0.2)
