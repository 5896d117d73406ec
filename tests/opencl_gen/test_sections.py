"""`take-k ∘ drop-n`, numpy's slice `[n:n + k]`, as a view: lowered by the default lowering, generated as an
index offset, run on the device against numpy and the interpreter, on one and two dimensions, as an input
of a map and of a reduction, at sizes that are and are not multiples of anything."""

import numpy as np
import pytest

import lift
from lift import ArrayType, Drop, Float, Map, Reduce, SizeVar, Take, Transpose, fun, interpret

from opencl_device import needs_device
from userfuns import add, neg

N, M = SizeVar("N"), SizeVar("M")
RNG = np.random.default_rng(5)


def _check(program, want, *inputs):
    np.testing.assert_allclose(interpret(program, *inputs), want, rtol=1e-5, atol=1e-5)
    got = lift.compile(program, lowering="default")(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@needs_device
@pytest.mark.parametrize("n", [64, 1001])
def test_a_section_of_a_vector_is_mapped_and_reduced(n):
    x = RNG.uniform(-1, 1, n).astype(np.float32)
    section = lambda v: Take(n - 9)(Drop(4)(v))                      # x[4 : n - 5]
    _check(fun([ArrayType(Float, N)], lambda v: Map(neg)(section(v))), -x[4:n - 5], x)
    _check(fun([ArrayType(Float, N)], lambda v: Reduce(add, 0.0)(section(v))), np.array([x[4:n - 5].sum()]), x)


@needs_device
def test_sections_of_both_axes_of_a_matrix():
    a = RNG.uniform(-1, 1, (37, 50)).astype(np.float32)
    rows = lambda m: Take(30)(Drop(5)(m))                            # a[5:35]
    cols = lambda m: Map(lambda r: Take(20)(Drop(11)(r)))(m)         # a[:, 11:31]
    program = fun([ArrayType(ArrayType(Float, M), N)], lambda m: Map(Map(neg))(cols(rows(m))))
    _check(program, -a[5:35, 11:31], a)
    transposed = fun([ArrayType(ArrayType(Float, M), N)], lambda m: Map(Map(neg))(Transpose()(cols(rows(m)))))
    _check(transposed, -a[5:35, 11:31].T, a)


def test_a_drop_longer_than_the_array_is_a_type_error():
    with pytest.raises(lift.LiftTypeError, match="at least 9 elements"):
        lift.infer(fun([ArrayType(Float, 8)], lambda v: Drop(9)(v)))
