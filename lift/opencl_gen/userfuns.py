"""OpenCL C definitions of user functions, their vectorised versions, tuple structs, and literals.

`vectorize-4(add)` is emitted as `add_v4`, the same body over `float4` (paper Table 2, vect-n):
the user function's own translation gives it (`userfun_c_body` with vector types).
"""

from __future__ import annotations

import math

from lift.errors import LiftCodegenError
from lift.ir.nodes import Literal
from lift.ir.userfun import UserFun, vectorized_in_types, vectorized_type
from lift.opencl_gen.c_types import c_struct_definition, c_type_name
from lift.opencl_gen.userfun_c import length_params, userfun_c_body
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, element_type


class UserFunctions:
    """The user functions and tuple types a program uses, in an order C can compile."""

    def __init__(self):
        self.functions: dict = {}
        self.structs: dict = {}

    def require_type(self, t: Type) -> None:
        """Declare the structs that `t` needs (components first)."""
        t = element_type(t)
        if isinstance(t, TupleType) and t not in self.structs:
            for e in t.elems:
                self.require_type(e)
            self.structs[t] = c_struct_definition(t)

    def declare(self, f: UserFun, width: int = 0, spaces: tuple = (), arg_types: tuple = ()) -> str:
        """The C name of `f` (its `width`-lane version when width > 0, applied to arguments of `arg_types`:
        `f_v16_lanes` where an array argument is one of vectors, `vectorized_in_types`), defined once; `spaces`
        are the address spaces of its array parameters, in order (`f_private` reads a window copied to private
        memory, `f_private_global` a private array and a global one)."""
        in_types = vectorized_in_types(f, width, arg_types or f.in_types) if width else f.in_types
        lanes = any(isinstance(t, ArrayType) and t != v for t, v in zip(f.in_types, in_types))
        name = (f"{f.name}_v{width}" + ("_lanes" if lanes else "")) if width else f.name
        if set(spaces) - {"global"}:
            name = "_".join((name,) + (spaces[:1] if len(set(spaces)) == 1 else spaces))
        space = iter(spaces)
        existing = self.functions.get(name)
        if existing is not None:
            if existing[0] != f:
                raise LiftCodegenError(f"two different user functions are named {f.name}")
            return name
        out_type = vectorized_type(f.out_type, width) if width else f.out_type
        for t in in_types + (out_type,):
            self.require_type(t)
        params = ", ".join([_param(n, t, next(space) if isinstance(t, ArrayType) else "") for n, t in
                            zip(f.param_names, in_types)]
                           + [f"int {name}" for _, name in length_params(f.origin)])
        body = userfun_c_body(f, in_types, out_type) if width else userfun_c_body(f)
        body = "\n".join("    " + line if line.strip() else line for line in body.strip().splitlines())
        self.functions[name] = (f, f"{c_type_name(out_type)} {name}({params}) {{\n{body}\n}}")
        return name

    def definitions(self) -> list:
        return list(self.structs.values()) + [text for _, text in self.functions.values()]


def _param(name: str, t: Type, space: str) -> str:
    if isinstance(t, ArrayType):
        elem = t
        while isinstance(elem, ArrayType):
            elem = elem.elem
        return f"{space} const {c_type_name(elem)}* {name}"
    return f"{c_type_name(t)} {name}"


def c_scalar(value, t: ScalarType) -> str:
    """A scalar constant in C: `0.5f` for float, `0.5` for double."""
    if t.name in ("float", "double"):
        v = float(value)
        if math.isnan(v):
            text = "NAN"
        elif math.isinf(v):
            text = "INFINITY" if v > 0 else "-INFINITY"
        else:
            text = repr(v)
            if "e" not in text and "." not in text:
                text += ".0"
            return text + ("f" if t.name == "float" else "")
        return text if t.name == "double" else f"((float){text})"
    if t.name == "bool":
        return "true" if value else "false"
    return str(int(value))


def c_literal(lit: Literal) -> str:
    """A literal in C, vectors as `(float4)(0.0f)` or `(float4)(a, b, c, d)`."""
    t = lit.t
    if isinstance(t, VectorType):
        values = lit.value if isinstance(lit.value, tuple) else (lit.value,)
        return f"({c_type_name(t)})({', '.join(c_scalar(v, t.elem) for v in values)})"
    if isinstance(t, ScalarType):
        return c_scalar(lit.value, t)
    raise LiftCodegenError(f"no C literal for {t}")
