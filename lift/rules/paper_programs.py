"""The high-level programs of the paper's Figure 5 (`scal`, `asum`, `dot`, `gemv`), on which the paper's
derivation strategies (`lift.rules.paper_derivations`) are recorded as `Derivation`s.

A recorded derivation names locations in the program it was recorded on; the strategies themselves apply
to any program where they match.
"""

from __future__ import annotations

from lift.ir.nodes import fun
from lift.ir.patterns import Join, Map, Reduce, Zip
from lift.ir.userfun import UserFun
from lift.types.arith import SizeVar
from lift.types.types import ArrayType, Float

N, M = SizeVar("N"), SizeVar("M")

add = UserFun("add", ("x", "y"), "return x + y;", (Float, Float), Float, python=lambda x, y: x + y)
mult = UserFun("mult", ("x", "y"), "return x * y;", (Float, Float), Float, python=lambda x, y: x * y)
absf = UserFun("absf", ("x",), "return fabs(x);", (Float,), Float, python=abs)

scal = fun([Float, ArrayType(Float, N)], lambda a, x: Map(lambda xi: mult(a, xi))(x))
asum = fun([ArrayType(Float, N)], lambda x: (Reduce(add, 0.0) @ Map(absf))(x))
dot = fun([ArrayType(Float, N), ArrayType(Float, N)], lambda x, y: (Reduce(add, 0.0) @ Map(mult))(Zip(x, y)))
gemv = fun([ArrayType(ArrayType(Float, N), M), ArrayType(Float, N), ArrayType(Float, M), Float, Float],
           lambda A, x, y, a, b: Map(add)(Zip(
               Join()(Map(lambda row: Map(lambda v: mult(a, v))((Reduce(add, 0.0) @ Map(mult))(Zip(x, row))))(A)),
               Map(lambda v: mult(b, v))(y))))
