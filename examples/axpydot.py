"""AXPYDOT: `z = w - a*v` and `r = z . u`, two BLAS calls as one program with two outputs.

`axpydot` says what is computed: `z` once, used by the dot product and returned. `axpydot_shared`
lowers the two calls apart (three kernels: `z`, the dot product's partial sums, their sum), with `z`
computed once, into its output, and read back by the dot product. `axpydot_fused` is the fused kernel
(kernel fusion of BLAS calls): one map over chunks computes each chunk of `z` into the output and the
chunk's partial sum of `z*u` beside it (`unzip` splits the pairs into two arrays), and a small
sequential kernel adds the partial sums: two kernels, and `z` is never read back.
"""

from lift import (ArrayType, Float, Get, Join, Map, MapGlb, MapSeq, Reduce, ReduceSeq, SizeVar, Split, Tuple,
                  Unzip, Zip, fun, userfun)

from blas import add, mult

N = SizeVar("N")
SIZES = {"N": 1 << 22}
V = ArrayType(Float, N)


@userfun
def w_minus_av(a: Float, w: Float, v: Float) -> Float:
    return w - a * v


@userfun
def multiply_and_add(acc: Float, x: Float, y: Float) -> Float:
    return acc + x * y


@userfun
def axpy_dot_step(acc: Float, a: Float, w: Float, v: Float, u: Float) -> Float:
    return acc + (w - a * v) * u


axpydot = fun([Float, V, V, V], lambda a, w, v, u: fun(
    lambda z: Tuple(z, (Reduce(add, 0.0) @ Map(mult))(Zip(z, u)))
)(Map(lambda wv: w_minus_av(a, Get(wv, 0), Get(wv, 1)))(Zip(w, v))))

axpydot_shared = fun([Float, V, V, V], lambda a, w, v, u: fun(
    lambda z: Tuple(z, (ReduceSeq(add, 0.0) @ Join() @ MapGlb(
        ReduceSeq(lambda acc, zu: multiply_and_add(acc, Get(zu, 0), Get(zu, 1)), 0.0)) @ Split(8))(Zip(z, u)))
)((Join() @ MapGlb(MapSeq(lambda wv: w_minus_av(a, Get(wv, 0), Get(wv, 1)))) @ Split(8))(Zip(w, v))))

axpydot_fused = fun([Float, V, V, V], lambda a, w, v, u: fun(
    lambda t: Tuple(Join()(Get(t, 0)), (ReduceSeq(add, 0.0) @ Join())(Get(t, 1)))
)((Unzip() @ MapGlb(lambda c: Tuple(
    MapSeq(lambda p: w_minus_av(a, Get(p, 0), Get(p, 1)))(c),
    ReduceSeq(lambda acc, p: axpy_dot_step(acc, a, Get(p, 0), Get(p, 1), Get(p, 2)), 0.0)(c)
)) @ Split(8))(Zip(w, v, u))))
