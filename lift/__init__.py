"""lift: functional data-parallel patterns and rewrite rules compiled to OpenCL kernels.

After Steuwer, Fensch and Dubach, "Patterns and Rewrite Rules for Systematic Code Generation".
A program is a high-level expression (`Reduce(add, 0.0) @ Map(absf)`); rewrite rules derive
OpenCL-level expressions from it, and a code generator that decides nothing emits their kernels.
"""

from lift.errors import (LiftCodegenError, LiftDeviceError, LiftError, LiftEvalError, LiftSizeError,
                         LiftTypeError)
from lift.ir.interpreter import interpret
from lift.ir.opencl_patterns import AsScalar, AsVector, ReorderStride, ToGlobal, ToLocal, ToPrivate, Vectorize
from lift.ir.operators import LIFT_MATH, eq, math_userfun, ne, operator_userfun
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param, fun
from lift.ir.patterns import (Concat, Drop, Get, Id, Iterate, IterateHost, Join, Map, MapAccumSeq, MapGlb, MapLcl,
                              MapSeq, MapSeqSlide, MapSeqUnroll, MapSeqUnswitch, MapWrg, Pad, PadToMultiple, PartRed,
                              Reduce, ReduceSeq, ReduceSeqUnroll, Reorder, Slide, Split, Take, Transpose, Tuple, Unzip,
                              Zip)
from lift.ir.printer import paper, python_source
from lift.ir.routine import Routine, inline_routines, routine
from lift.ir.call_graph import CallGraph
from lift.ir.typecheck import TypedProgram, infer
from lift.ir.userfun import UserFun, userfun
from lift.explore.tuned_compile import compile
from lift.arrays import LiftArray, asarray, config, evaluate, explain, maximum, minimum, where
from lift.types.arith import ArithExpr, Cst, SizeVar, Var
from lift.types.types import (ArrayType, Bool, Double, Float, Int, ScalarType, TupleType, Type,
                              VectorType)

globals().update(LIFT_MATH)  # lift.sqrt, lift.exp, ..., lift.fmin, lift.fmax: on IR values, in user functions, on arrays

__version__ = "0.1.0"

__all__ = [
    "AsScalar", "AsVector", "ArithExpr", "ArrayType", "compile", "Bool", "CallGraph", "Concat", "Cst", "Double",
    "Drop",
    "Expr", "Float", "FunCall", "FunDecl", "Get", "Id", "Int", "Iterate", "IterateHost", "Join", "Lambda", "LiftArray",
    "LiftCodegenError", "LiftDeviceError", "LiftError", "LiftEvalError", "LiftSizeError", "LiftTypeError",
    "Literal", "Map", "MapAccumSeq", "MapGlb", "MapLcl", "MapSeq", "MapSeqSlide", "MapSeqUnroll", "MapSeqUnswitch",
    "MapWrg", "Pad", "PadToMultiple", "Param", "PartRed", "Reduce", "ReduceSeq", "ReduceSeqUnroll", "Reorder",
    "ReorderStride", "Routine", "ScalarType", "SizeVar", "Slide", "Split", "Take", "ToGlobal", "ToLocal",
    "ToPrivate", "Transpose", "Tuple", "TupleType", "Type", "TypedProgram", "Unzip", "UserFun", "Var", "VectorType",
    "Vectorize", "Zip", "asarray", "config", "eq", "evaluate", "explain", "fun", "infer", "inline_routines",
    "interpret", "math_userfun", "maximum", "minimum", "ne", "operator_userfun", "paper", "python_source", "routine",
    "userfun", "where",
] + sorted(LIFT_MATH)
