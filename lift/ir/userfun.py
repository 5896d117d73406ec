"""User functions: the scalar code that patterns apply (the paper's `add`, `mult`, `abs`, `updateF`).

A user function has an OpenCL C body for the code generator and, for the reference interpreter, a
Python callable that works on whole numpy arrays at once. Written as a restricted Python function
(`@userfun`), one definition gives both (the code generator writes the C, `lift.opencl_gen.userfun_c`); written as raw C (`UserFun(name, params, body, in_types,
out_type)`), the Python equivalent is optional and the interpreter says so when it is missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Optional

from lift.errors import LiftTypeError
from lift.ir.c_names import check_c_name
from lift.ir.nodes import FunDecl
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType


@dataclass(frozen=True, eq=False)
class UserFun(FunDecl):
    """A user function: `name(params) { body }` with declared parameter and result types.

    `body` is OpenCL C as the user wrote it. For a function written in Python, `origin` is its translation
    (`PythonUserFun`) and `body` the text of its typed body (`PythonUserFun.canonical_body`), which makes
    two translations equal exactly when their typed bodies are; the code generator writes its C
    (`lift.opencl_gen.userfun_c.userfun_c_body`).

    `associative=True` declares a function `(T, T) -> T` associative and commutative, so that a `reduce`
    of it may be split into partial reductions (`lift.ir.associativity` lists what lift recognises itself).
    """

    name: str
    param_names: tuple
    body: str
    in_types: tuple
    out_type: Type
    python: Optional[Callable] = field(default=None, compare=False)
    origin: Any = field(default=None, compare=False)
    associative: bool = False

    def __post_init__(self):
        names, types = tuple(self.param_names), tuple(self.in_types)
        if isinstance(self.param_names, str):
            names = (self.param_names,)
        if isinstance(self.in_types, Type):
            types = (self.in_types,)
        if len(names) != len(types):
            raise LiftTypeError(f"user function {self.name}: {len(names)} parameters but {len(types)} parameter types")
        check_c_name(self.name, lambda message: LiftTypeError(f"user function {self.name!r}: {message}"),
                     generated=True)
        for n in names:
            check_c_name(n, lambda message: LiftTypeError(f"user function {self.name}, parameter {n!r}: {message}"))
        object.__setattr__(self, "param_names", names)
        object.__setattr__(self, "in_types", types)
        if self.associative and (len(types) != 2 or not types[0] == types[1] == self.out_type):
            raise LiftTypeError(f"user function {self.name}: declared associative, so its type must be (T, T) -> T; "
                                f"it is ({', '.join(map(str, types))}) -> {self.out_type}")

    @property
    def arity(self) -> int:
        return len(self.param_names)

    @property
    def flops(self) -> int:
        """Floating-point operations of one application: counted in the body of a function written in Python
        (`PythonUserFun.flops`); one for a C body, which is not parsed."""
        return self.origin.flops if self.origin is not None else 1

    def operations(self, call_weights: Mapping[str, int] = {}) -> int:
        """`flops`, with a call of a math function named in `call_weights` counting that many operations (one for
        a C body)."""
        return self.origin.operations(call_weights) if self.origin is not None else 1

    def reread(self, suffix: str, **options) -> Optional["UserFun"]:
        """This function as its Python source reads with other `options` (`lift.ir.python_userfun.PythonUserFun`'s:
        loops unrolled, sines and cosines fused), named `<name>_<suffix>`; None where it is written in C or the
        options leave its body as it is."""
        if self.origin is None:
            return None
        origin = replace(self.origin, **options)
        if origin.canonical_body == self.origin.canonical_body:
            return None
        return UserFun(f"{self.name}_{suffix}", self.param_names, origin.canonical_body, self.in_types, self.out_type,
                       python=origin.numpy_impl, origin=origin, associative=self.associative)

    def __str__(self) -> str:
        return self.name


def userfun(fn: Optional[Callable] = None, *, source: Optional[str] = None, names: Optional[dict] = None,
            associative: bool = False):
    """Decorator: a restricted, annotated Python function becomes a `UserFun` (typed body and numpy body).

    In a REPL or a notebook, where Python keeps no source text of a function, give the text instead:
    `userfun(source="def f(x: Float) -> Float: ...", names=globals())`, `names` being what the body may
    refer to beyond lift's types and `math`. `@userfun(associative=True)` declares the function associative
    and commutative (see `UserFun`).
    """
    from lift.ir.python_userfun import function_from_source, translate

    if fn is None and source is None:
        return lambda f: userfun(f, names=names, associative=associative)
    if (fn is None) == (source is None):
        raise LiftTypeError("userfun: give a function (`@userfun`) or its source (`userfun(source=...)`)")
    spec = translate(function_from_source(source, names), source) if fn is None else translate(fn)
    return UserFun(spec.name, spec.param_names, spec.canonical_body, spec.in_types, spec.out_type,
                   python=spec.numpy_impl, origin=spec, associative=associative)


def vectorized_type(t: Type, n: int) -> Type:
    """The type a user function's parameter or result takes under `vectorize-n`: scalars become vectors."""
    if isinstance(t, ScalarType):
        return VectorType(t, n)
    if isinstance(t, TupleType):
        return TupleType(*(vectorized_type(e, n) for e in t.elems))
    if isinstance(t, ArrayType):
        return t
    raise LiftTypeError(f"vectorize-{n}: cannot vectorise a user function over {t}")


def lane_array(t: Type, n: int) -> Type:
    """`t`, an array (of arrays) of scalars, with `n`-lane vectors for its scalars."""
    return ArrayType(lane_array(t.elem, n), t.length) if isinstance(t, ArrayType) else VectorType(t, n)


def vectorized_in_types(f: UserFun, n: int, arg_types: tuple) -> tuple:
    """The parameter types of `vectorize-n(f)` applied to arguments of `arg_types`: scalars become vectors; an
    array parameter takes an array of `n`-lane vectors where its argument is one (a window of `vectorize-windows`,
    lane `j` holding window `j`), and otherwise stays an array of scalars, the same in every lane (a stencil's
    weights)."""
    return tuple(lane_array(t, n) if isinstance(t, ArrayType) and isinstance(a, ArrayType) and a == lane_array(t, n)
                 else vectorized_type(t, n) for t, a in zip(f.in_types, arg_types))
