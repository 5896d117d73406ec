"""`reduce-seq-unroll` generated: the steps of a fold one after another, each with its index a constant (no loop,
no division or remainder of a flattened index left in the source), for a scalar accumulator and for an array one
updated in place, against numpy on the device."""

import numpy as np

from lift import (ArrayType, Float, Get, Join, Literal, MapGlb, MapSeq, ReduceSeqUnroll, SizeVar, UserFun, Zip,
                  fun)
from lift.opencl_gen.compiled import compile

from opencl_device import needs_device

N = SizeVar("N")
add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
RNG = np.random.default_rng(5)


@needs_device
def test_a_scalar_fold_over_a_flattened_window():
    program = fun([ArrayType(ArrayType(ArrayType(Float, 3), 3), N)],
                  lambda x: MapGlb(lambda nb: ReduceSeqUnroll(add, 0.5)(Join()(nb)))(x))
    x = RNG.uniform(-1, 1, (7, 3, 3)).astype(np.float32)
    kernel = compile(program, sizes={"N": 7})
    assert "reduce-seq-unroll: step 8" in kernel.source and "/3" not in kernel.source and "%3" not in kernel.source
    np.testing.assert_allclose(np.ravel(kernel(x)), x.reshape(7, 9).sum(axis=1) + 0.5, rtol=1e-5)


def _row_sum(acc, row):
    return MapSeq(lambda t: add(Get(t, 0), Get(t, 1)))(Zip(acc, row))


@needs_device
def test_an_array_fold_updated_in_place():
    program = fun([ArrayType(ArrayType(ArrayType(Float, 4), 3), N)],
                  lambda x: MapGlb(lambda m: ReduceSeqUnroll(_row_sum, Literal(0.0, ArrayType(Float, 4)))(m))(x))
    x = RNG.uniform(-1, 1, (5, 3, 4)).astype(np.float32)
    kernel = compile(program, sizes={"N": 5})
    assert "reduce-seq-unroll: step 2" in kernel.source
    np.testing.assert_allclose(np.reshape(kernel(x), (5, 4)), x.sum(axis=1), rtol=1e-5)
