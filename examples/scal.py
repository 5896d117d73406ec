"""scal: vector scaling `map(mult(a), x)` (paper Figure 5, line 5), and Figure 2(b)'s low-level form."""

from lift import (ArrayType, AsScalar, AsVector, Float, Join, Map, MapGlb, MapLcl, MapWrg, SizeVar, Split, Vectorize,
                  fun)

from blas import mult

N = SizeVar("N")
SIZES = {"N": 1 << 24}

scal = fun([Float, ArrayType(Float, N)], lambda a, x: Map(lambda xi: mult(a, xi))(x))

# Figure 2(b), with the scale factor a parameter instead of the constant 3.
scal_vectorised = fun([Float, ArrayType(Float, N)], lambda a, x: (
    Join() @ MapWrg(AsScalar() @ MapLcl(lambda v: Vectorize(4, mult)(a, v)) @ AsVector(4))
    @ Split(1024))(x))

# Lowered: one work-item per element.
scal_global = fun([Float, ArrayType(Float, N)], lambda a, x: MapGlb(lambda xi: mult(a, xi))(x))

# Vectorised, one work-item per float4, the work-group size left to the driver.
scal_vectorised_global = fun([Float, ArrayType(Float, N)], lambda a, x: (
    AsScalar() @ MapGlb(lambda v: Vectorize(4, mult)(a, v)) @ AsVector(4))(x))
