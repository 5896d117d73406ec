"""User functions written in Python, translated to OpenCL C and to numpy.

Lift's user functions (`add`, `abs`, BlackScholes' `BSComputation`, MD's `updateF`) are written once,
as annotated Python functions in a small subset, and serve both the OpenCL C code generator and the
reference interpreter. `translate(fn)` parses the function's source with `ast` and infers the type
of every expression from the parameter annotations, giving a small typed body. The typed body prints
as OpenCL C statements (`lift.opencl_gen.userfun_c`, also for the vector types of `vectorize-n(f)`) and
runs as numpy operations on whole arrays (`PythonUserFun.numpy_impl`).

The modules: this one translates a function (`translate`, `PythonUserFun`); `lift.ir.userfun_typing` types
its body into the nodes of `lift.ir.userfun_body`; `lift.ir.userfun_unrolling` unrolls its loops of constant
trip count where asked (`PythonUserFun.unroll`, rule `userfun-loop-unroll`), `lift.ir.userfun_sincos` computes
the sine and cosine of one angle by one call (`PythonUserFun.sincos`, rule `userfun-sincos`);
`lift.ir.userfun_numpy` evaluates that body on arrays and `lift.opencl_gen.userfun_c` writes its C.

The subset, with C's meaning where Python's differs:
- parameters and the result annotated with lift types; a tuple of types is a `TupleType`;
- locals, assigned (also `+=` etc.) and re-assigned; a local takes the widest type assigned to it,
  a parameter keeps its declared type;
- `+ - * / % **`, unary `-`, comparisons (chained too), `and or not`, `a if c else b`;
  `/` and `%` on ints truncate toward zero as in C, `%` on floats is `fmod`;
- `if`/`else` statements whose branches assign locals or both return (an `if` that returns makes
  the rest of the function its other branch);
- `for i in range(...)` loops (one to three Int arguments, the step a constant), nested, accumulating into
  locals assigned before the loop; sizes as bounds: `len(a)` or the size variable of an array parameter's
  declared length, passed to the C function as an extra `int` parameter;
- calls to `math` functions and lift's (`lift.sqrt`, `lift.fmin`, ...), `abs min max len float int`, and to
  lift types: `Float(x)` converts, `VectorType(Float, 4)(a, b, c, d)` builds a vector;
- numeric literals, `math.pi`, `math.e` and numeric constants of the function's module, inlined;
  literals are `Float` or `Int` and take the other operand's type when it is wider
  (`x * 0.5` is `float` for a `Float` x, `double` for a `Double` x);
- vector components `v.x`..`v.w`, `v.s0`..`v.sF`, `v[i]`; tuple components `t[i]`; array elements `a[i]`,
  `a[i][j]` (inner rows of constant length);
- a tuple result, built in the `return` statement: `return (a, b)`.

On vectors, conditions are lane masks: conditional expressions become `select`, and `if` statements
assign (and return) lane by lane. numpy evaluates both branches of every condition and merges them
with `np.where`.
"""


from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Mapping, Optional

from lift.errors import LiftTypeError
from lift.ir.userfun_body import flops_of
from lift.ir.userfun_numpy import numpy_function
from lift.ir.userfun_scalars import scalar_reads
from lift.ir.c_names import check_c_name
from lift.ir.userfun_scope import namespace
from lift.ir.userfun_typing import typed_body
from lift.ir.userfun_sincos import fused_sincos
from lift.ir.userfun_unrolling import unrolled
from lift.types.types import ArrayType, Type, as_type

__all__ = ["PythonUserFun", "function_from_source", "translate"]


@dataclass(frozen=True)
class PythonUserFun:
    """A user function translated from Python: its signature and source, its typed body and its numpy twin."""

    name: str
    param_names: tuple
    in_types: tuple
    out_type: Type
    source: str
    function: Callable = field(repr=False)  # two closures of one source are two user functions
    definition: ast.FunctionDef = field(compare=False, repr=False)
    first_line: int = field(compare=False, repr=False)
    unroll: int = 0  # the most statements a loop of constant trip count is unrolled into; 0: none
    sincos: bool = False  # the sine and cosine of one angle computed by one call
    scalars: frozenset = frozenset()  # parameters declared `[T]1`, read as `m[0]`, taken as `T`

    def typed(self, in_types: tuple, out_type: Type) -> tuple:
        """The typed statements (`lift.ir.userfun_body`) for the given types, with the loops that fit `unroll`
        unrolled (`lift.ir.userfun_unrolling`) and then, where `sincos`, each sine and cosine of one angle fused
        (`lift.ir.userfun_sincos`), and the type of each local. A parameter of `scalars` is typed as the array of
        one element that the source reads, whose reads `m[0]` become the scalar (`lift.ir.userfun_scalars`)."""
        if self.scalars:
            in_types = tuple(ArrayType(t, 1) if n in self.scalars else t for n, t in zip(self.param_names, in_types))
        body, local_types = typed_body(self, in_types, out_type)
        body = scalar_reads(body, self.scalars) if self.scalars else body
        body = unrolled(body, self.unroll) if self.unroll else body
        return fused_sincos(body, local_types, set(self.param_names)) if self.sincos else (body, local_types)

    @cached_property
    def body(self) -> tuple:
        """The typed statements for the declared types."""
        return self.typed(self.in_types, self.out_type)[0]

    @cached_property
    def canonical_body(self) -> str:
        """The typed body as text: what makes two translations the same function (two closures of one source
        with different constants are not), and the `UserFun.body` of the function."""
        return repr(self.body)

    @cached_property
    def flops(self) -> int:
        """Floating-point operations of one application: the arithmetic operators (`+ - * / % **`) and calls
        on floating-point values in every statement, both branches of a condition included (on vectors
        the hardware runs both). `idf` has none, `add` one, `abs_and_add` one."""
        return self.operations()

    def operations(self, call_weights: Mapping[str, int] = {}) -> int:
        """`flops`, with a call of a math function named in `call_weights` counting that many operations."""
        return sum(flops_of(stmt, call_weights) for stmt in self.body)

    @cached_property
    def numpy_impl(self) -> Callable:
        """The function on numpy arrays: vector values carry a trailing lane axis, tuples are Python tuples."""
        return numpy_function(self, self.body)


def translate(fn: Callable, source: Optional[str] = None) -> PythonUserFun:
    """Parse and type-check an annotated Python function; raise `LiftTypeError` outside the subset.

    The function's text is `source` where given (`function_from_source`), else what `inspect` finds in its
    file; a function defined in a REPL or by `exec` has no file, and the error says to give its source.
    """
    name = getattr(fn, "__name__", repr(fn))
    if not inspect.isfunction(fn) or name == "<lambda>":
        raise LiftTypeError(f"user function {name}: user functions are Python functions defined with `def`")
    if source is not None:
        lines, first_line = source.splitlines(keepends=True), 1
    else:
        try:
            lines, first_line = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            raise LiftTypeError(f"user function {name}: its source code is not available (defined in a REPL, a "
                                f"notebook cell or by `exec`): write `userfun(source=\"def {name}(...): ...\")`") from None
    source = textwrap.dedent("".join(lines))
    definition = ast.parse(source).body[0]
    if not isinstance(definition, ast.FunctionDef):
        raise LiftTypeError(f"user function {name}: user functions are Python functions defined with `def`")
    source = "\n".join(source.splitlines()[definition.lineno - 1:definition.end_lineno])

    def error(node, message):
        return LiftTypeError(f"user function {name}, line {node.lineno + first_line - 1}: {message}")

    args = definition.args
    if args.posonlyargs or args.vararg or args.kwonlyargs or args.kwarg or args.defaults:
        raise error(definition, "only plain parameters are supported (no defaults, `*args`, `**kwargs` "
                                "or keyword-only parameters)")
    annotations = fn.__annotations__

    def annotated_type(key, node, what):
        if key not in annotations:
            raise error(node, f"{what} has no type annotation")
        value = annotations[key]
        try:
            t = as_type(eval(value, dict(namespace(fn))) if isinstance(value, str) else value)
        except Exception as e:
            raise error(node, f"the annotation of {what} does not evaluate: {type(e).__name__}: {e}") from None
        if t is None:
            raise error(node, f"the annotation of {what} is not a lift type: {value!r}")
        if key == "return" and isinstance(t, ArrayType):
            raise error(node, f"a user function cannot return an array ({t})")
        return t

    check_c_name(name, lambda message: error(definition, message), generated=True)
    for a in args.args:
        check_c_name(a.arg, lambda message, node=a: error(node, message))
    param_names = tuple(a.arg for a in args.args)
    in_types = tuple(annotated_type(a.arg, a, f"parameter `{a.arg}`") for a in args.args)
    out_type = annotated_type("return", definition, "the result")
    fun = PythonUserFun(name, param_names, in_types, out_type, source, fn, definition, first_line)
    fun.body  # typed now, so that a function outside the subset fails where it is defined
    return fun


def function_from_source(source: str, names: Optional[dict] = None) -> Callable:
    """The one function that `source` defines, executed where it sees lift's types, `math` and `names`
    (constants and types of the caller): a user function written in a REPL or a notebook."""
    import math

    import lift.types.types as lift_types

    tree = ast.parse(textwrap.dedent(source))
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.FunctionDef):
        raise LiftTypeError("userfun(source=...): the source must define exactly one function with `def`")
    scope = {n: getattr(lift_types, n) for n in ("ArrayType", "Bool", "Double", "Float", "Int", "TupleType",
                                                  "VectorType")}
    scope.update({"math": math, **(names or {})})
    try:
        exec(compile(tree, "<userfun>", "exec"), scope)
    except Exception as e:
        raise LiftTypeError(f"userfun(source=...): defining the function failed: {type(e).__name__}: {e}") from None
    return scope[tree.body[0].name]

