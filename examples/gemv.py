"""gemv: `y = a*A*x + b*y` (paper Figure 5, lines 8-10), reusing dot and scal as building blocks."""

from lift import (ArrayType, Float, Get, Id, Iterate, Join, Map, MapGlb, MapLcl, MapSeq, MapWrg, Reduce, ReduceSeq,
                  ReorderStride, SizeVar, Split, ToGlobal, ToLocal, Zip, fun, userfun)

from blas import add, mult

M = SizeVar("M")
N = SizeVar("N")
SIZES = {"M": 4096, "N": 4096}


def scal(a):
    """`scal(a)`: the map of `mult(a)`, partially applied as in Figure 5."""
    return Map(lambda v: mult(a, v))


def dot(x):
    """`dot(x)`: the dot product with `x`, a function of the other vector."""
    return lambda row: (Reduce(add, 0.0) @ Map(mult))(Zip(x, row))


gemv = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, N), ArrayType(Float, M), Float, Float],
           lambda A, x, y, a, b: Map(add)(Zip(
               Join()(Map(scal(a) @ dot(x))(A)),
               scal(b)(y))))


@userfun
def multiply_and_add(acc: Float, x: Float, y: Float) -> Float:
    return acc + x * y


@userfun
def axpby(a: Float, x: Float, b: Float, y: Float) -> Float:
    return a * x + b * y


def _row_dot(reorder):
    """One work-group per row: 64 work-items each reduce a strip into local memory, then a tree of 6 steps."""
    def row_dot(x):
        return lambda row: (
            Join() @ ToGlobal(MapLcl(MapSeq(Id()))) @ Split(1)
            @ Iterate(6, Join() @ MapLcl(ReduceSeq(add, 0.0)) @ Split(2))
            @ Join() @ ToLocal(MapLcl(ReduceSeq(lambda acc, xy: multiply_and_add(acc, Get(xy, 0), Get(xy, 1)), 0.0)))
            @ Split(N / 64) @ reorder)(Zip(x, row))
    return row_dot


def _gemv_lowered(reorder):
    return fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, N), ArrayType(Float, M), Float, Float],
               lambda A, x, y, a, b: MapGlb(lambda zy: axpby(a, Get(zy, 0), b, Get(zy, 1)))(Zip(
                   Join()(MapWrg(_row_dot(reorder)(x))(A)), y)))


# A work-group per row; each work-item reads a contiguous strip of the row.
gemv_workgroup = _gemv_lowered(Id())
# The same with coalesced reads: consecutive work-items read consecutive elements (reorder-stride).
gemv_coalesced = _gemv_lowered(ReorderStride(64))
