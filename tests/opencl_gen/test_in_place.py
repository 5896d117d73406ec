"""Results written over an input (`compile(..., in_place="x")`), as BLAS's `x := a x`: run on the device,
compared with the reference interpreter, and refused where the generated code would read overwritten data."""

import numpy as np
import pytest

from lift import (ArrayType, AsScalar, AsVector, Float, Get, Join, MapGlb, MapSeq, ReduceSeq, ReorderStride, SizeVar,
                  Split, Vectorize, Zip, fun, interpret)
from lift.errors import LiftCodegenError
from lift.opencl_gen.compiled import compile
from lift.opencl_gen.kernels import generate

from userfuns import add, mult

N = SizeVar("N")


scal4 = fun([Float, ArrayType(Float, N)], lambda a, x: (
    AsScalar() @ MapGlb(lambda v: Vectorize(4, mult)(a, v)) @ AsVector(4))(x))
scal_chunks = fun([Float, ArrayType(Float, N)], lambda a, x: (
    Join() @ MapGlb(MapSeq(lambda xi: mult(a, xi))) @ Split(16))(x))
axpy = fun([Float, ArrayType(Float, N), ArrayType(Float, N)], lambda a, x, y: MapGlb(
    lambda xy: add(mult(a, Get(xy, 0)), Get(xy, 1)))(Zip(x, y)))


@pytest.mark.parametrize("program, name", [(scal4, "x"), (scal_chunks, "x")])
def test_scal_overwrites_x(device, program, name):
    a, x = np.float32(1.5), np.random.default_rng(0).random(4096, dtype=np.float32)
    compiled = compile(program, device, in_place=name)
    assert "restrict" not in compiled.source.split("kernel void")[1].split(")")[0]
    run = compiled.prepare(a, x)
    run.upload()
    run.launch()
    got, _ = run.download()
    np.testing.assert_allclose(got, interpret(program, a, x), rtol=1e-6)
    assert run.out_buffers[0] is run.buffers["x"]


def test_axpy_overwrites_y(device):
    rng = np.random.default_rng(1)
    a, x, y = np.float32(2.0), rng.random(1000, dtype=np.float32), rng.random(1000, dtype=np.float32)
    got = compile(axpy, device, in_place="y")(a, x, y)
    np.testing.assert_allclose(got, interpret(axpy, a, x, y), rtol=1e-6)


def test_refusals():
    with pytest.raises(LiftCodegenError, match="not an input array of the program .* x"):
        generate(scal4, in_place="a")
    with pytest.raises(LiftCodegenError, match="not an input array"):
        generate(scal4, in_place="z")
    asum = fun([ArrayType(Float, N)], lambda x: (ReduceSeq(add, 0.0) @ Join() @ MapGlb(ReduceSeq(add, 0.0))
                                                 @ Split(16))(x))
    with pytest.raises(LiftCodegenError, match="cannot overwrite input x: the result has type"):
        generate(asum, in_place="x")
    shifted = fun([ArrayType(Float, N)], lambda x: MapGlb(lambda p: add(Get(p, 0), Get(p, 1)))(Zip(x, ReorderStride(4)(x))))
    with pytest.raises(LiftCodegenError, match="cannot overwrite input x: kernel 0 reads it at 2 places"):
        generate(shifted, sizes={"N": 64}, in_place="x")
    strided = fun([ArrayType(Float, N)], lambda x: MapGlb(lambda p: add(p, 1.0))(ReorderStride(4)(x)))
    with pytest.raises(LiftCodegenError, match="reads x at another element than the one it writes"):
        generate(strided, sizes={"N": 64}, in_place="x")
