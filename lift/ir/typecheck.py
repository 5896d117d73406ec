"""Type inference: every node's type from the program's declared parameter types (paper Tables 1-2).

`infer(program)` returns a `TypedProgram`: a copy of the program whose calls and parameters carry their
types (the `t` annotations the interpreter and the code generator read), its result type, and the
divisibility constraints on its sizes that could not be proved (`split-1024` of `float[N]` records
`N % 1024 == 0`; binding `N` later checks it). Errors are `LiftTypeError`s naming the pattern, the
expected and actual types, and the location: a path of child steps from the program's root
(`body.args0.f`), the same locations the rewrite engine prints.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Mapping, Optional

from lift.errors import LiftError, LiftSizeError, LiftTypeError
from lift.ir import patterns as P
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param, bind_sizes_in
from lift.ir.opencl_patterns import AddressSpaceCast, AsScalar, AsVector, ReorderStride, Vectorize
from lift.ir.routine import Routine
from lift.ir.source_location import locate
from lift.ir.userfun import UserFun, vectorized_in_types, vectorized_type
from lift.types.arith import ArithExpr, Cst, NotDivisible, UnboundSize
from lift.types.types import ArrayType, ScalarType, TupleType, Type, VectorType, is_one_element


@dataclass(frozen=True)
class SizeConstraint:
    """`length % divisor == 0`, required by the pattern at `where` and not provable from the types."""

    length: ArithExpr
    divisor: ArithExpr
    pattern: str
    where: str

    def check(self, sizes: Mapping[str, int]) -> None:
        try:
            length, divisor = self.length.eval(sizes), self.divisor.eval(sizes)
        except (UnboundSize, NotDivisible) as e:
            raise LiftSizeError(f"{self.pattern} at {self.where}: {e}") from None
        if divisor == 0 or length % divisor != 0:
            bound = ", ".join(f"{v.name}={sizes[v.name]}" for v in sorted(self.length.free_vars(), key=lambda v: v.name))
            raise LiftSizeError(
                f"{self.pattern} at {self.where} needs {self.length} to be a multiple of {self.divisor}, "
                f"but it is {length} ({bound})")


@dataclass(frozen=True)
class TypedProgram:
    """A program annotated with types, its result type and its size constraints."""

    expr: Lambda
    type: Type
    constraints: tuple

    @property
    def param_types(self) -> tuple:
        return tuple(p.t for p in self.expr.params)

    def check_sizes(self, sizes: Mapping[str, int]) -> None:
        """Raise `LiftSizeError` if the binding breaks a constraint (or leaves a needed size unbound)."""
        for c in self.constraints:
            c.check(sizes)


def infer(program: Lambda, param_types: Optional[tuple] = None) -> TypedProgram:
    """Infer the types of a program: a lambda whose parameters have declared types (or `param_types`)."""
    if not isinstance(program, Lambda):
        raise LiftTypeError(f"a program is a lambda built with fun([types], ...), got {type(program).__name__}")
    types = tuple(param_types) if param_types is not None else tuple(p.t for p in program.params)
    for p, t in zip(program.params, types):
        if t is None:
            raise LiftTypeError(f"parameter {p.name} of the program has no declared type: use fun([types], lambda ...)")
    try:
        return _infer_cached(program, types)
    except LiftError as e:
        raise locate(e, program)


@lru_cache(maxsize=4096)
def _infer_cached(program: Lambda, types: tuple) -> TypedProgram:
    ctx = TypeInference()
    lam, out = ctx.fun(program, list(types), "")
    return TypedProgram(lam, out, tuple(dict.fromkeys(ctx.constraints)))


def type_of(e: Expr) -> Type:
    """The type annotation of an inferred expression."""
    t = e.t
    if t is None:
        raise LiftTypeError(f"{e} has no inferred type: run lift.infer on its program first")
    return t


def _join(path: str, step: str) -> str:
    return f"{path}.{step}" if path else step


def _name(f: FunDecl) -> str:
    from lift.ir.printer import paper

    text = paper(f)
    return text if len(text) <= 80 else text[:77] + "..."


class TypeInference(Mapper):
    """The typing rules, one `map_<Pattern>(f, arg_types, path)` per function class, each returning the
    annotated function and its result type; the state of one inference is the environment of parameter
    types and the divisibility constraints found so far."""

    def __init__(self):
        self.constraints: list = []
        self.env: dict = {}

    def fail(self, f: FunDecl, where: str, expected: str, actual) -> None:
        raise LiftTypeError(f"{_name(f)} expects {expected}, got {actual} (at {where or 'the root'})")

    def divisible(self, f: FunDecl, length: ArithExpr, divisor: ArithExpr, where: str) -> None:
        if divisor.is_constant and divisor.value <= 0:
            raise LiftTypeError(f"{_name(f)}: the factor must be positive, got {divisor} (at {where or 'the root'})")
        if length.is_constant and divisor.is_constant:
            if length.value % divisor.value != 0:
                raise LiftTypeError(
                    f"{_name(f)} cannot divide an array of length {length} into chunks of {divisor} "
                    f"(at {where or 'the root'})")
            return
        if divisor.is_constant and length.is_divisible_by(divisor.value):
            return
        if length == divisor:
            return
        self.constraints.append(SizeConstraint(length, divisor, _name(f), where or "the root"))

    # --- expressions ------------------------------------------------------------------------------

    def expr(self, e: Expr, path: str) -> Expr:
        if isinstance(e, Param):
            t = self.env.get(e.name)
            if t is None:
                raise LiftTypeError(f"parameter {e.name} is not bound here (at {path or 'the root'})")
            return Param(e.name, t)
        if isinstance(e, Literal):
            return e
        if isinstance(e, FunCall):
            args = tuple(self.expr(a, _join(path, f"args{i}")) for i, a in enumerate(e.args))
            f, out = self.fun(e.f, [a.t for a in args], _join(path, "f"))
            return FunCall(f, args, out)
        raise LiftTypeError(f"unknown expression {e!r} (at {path})")

    def fun(self, f: FunDecl, arg_types: list, path: str):
        """Check `f` applied to arguments of `arg_types`; return the annotated `f` and the result type."""
        arg_types = self.unpack(f, arg_types, path)
        if f.arity != len(arg_types):
            self.fail(f, path, f"{f.arity} argument(s)", f"{len(arg_types)}: {', '.join(map(str, arg_types))}")
        return self(f, arg_types, path)

    def map_default(self, f: FunDecl, arg_types: list, path: str):
        raise LiftTypeError(f"no typing rule for {type(f).__name__} (at {path or 'the root'})")

    def unpack(self, f: FunDecl, arg_types: list, path: str) -> list:
        """A function of k parameters applied to one k-tuple takes the tuple's components (dot's map(mult))."""
        if f.arity > 1 and len(arg_types) == 1 and isinstance(arg_types[0], TupleType):
            if len(arg_types[0].elems) == f.arity:
                return list(arg_types[0].elems)
        return arg_types

    # --- functions ----------------------------------------------------------------------------------

    def map_Lambda(self, f: Lambda, arg_types: list, path: str):
        saved = dict(self.env)
        params = tuple(Param(p.name, t) for p, t in zip(f.params, arg_types))
        self.env.update({p.name: p.t for p in params})
        try:
            body = self.expr(f.body, _join(path, "body"))
        finally:
            self.env = saved
        return Lambda(params, body), body.t

    def map_Routine(self, f: Routine, arg_types: list, path: str):
        """A routine is typed through its lambda at the arguments' types, its sizes instantiated first."""
        sizes = f.instantiate(arg_types, path or "the root")
        lam = bind_sizes_in(f.lam, sizes) if sizes else f.lam
        saved, self.env = self.env, {}
        try:
            annotated, out = self.map_Lambda(lam, arg_types, _join(path, "lam"))
        finally:
            self.env = saved
        return replace(f, lam=annotated), out

    def map_UserFun(self, f: UserFun, arg_types: list, path: str, in_types=None, out_type=None):
        in_types = f.in_types if in_types is None else in_types
        for i, (want, got) in enumerate(zip(in_types, arg_types)):
            if not _userfun_arg_fits(want, got):
                one = is_one_element(got) and _userfun_arg_fits(want, got.elem)
                hint = (" (a reduction's result is an array of one element: map the function over it, "
                        "`Map(lambda s: ...)(Reduce(...)(x))`)") if one else ""
                self.fail(f, path, f"argument {i + 1} ({f.param_names[i]}) of type {want}", f"{got}{hint}")
        return f, f.out_type if out_type is None else out_type

    def map_Vectorize(self, f: Vectorize, arg_types: list, path: str):
        """`vectorize-n(f)`: `f` lane by lane; a scalar argument is broadcast to every lane (`vect(mult(a))`); an
        array argument is the same in every lane, or an array of vectors whose lane `j` is lane `j`'s array."""
        inner = f.f
        if isinstance(inner, P.Id):
            return f, self.map_Id(inner, arg_types, path)[1]
        if not isinstance(inner, UserFun):
            self.fail(f, path, "a user function to vectorise (push vectorize into lambdas first)", _name(inner))
        for t in inner.in_types + (inner.out_type,):
            if isinstance(t, VectorType):
                self.fail(f, path, "a scalar user function", f"{inner.name} over {t}")
        in_types = vectorized_in_types(inner, f.n, tuple(arg_types))
        out_type = vectorized_type(inner.out_type, f.n)
        lanes = [s if isinstance(s, ScalarType) and t == VectorType(s, f.n) else t
                 for s, t in zip(arg_types, in_types)]
        self.map_UserFun(inner, arg_types, _join(path, "f"), tuple(lanes), out_type)
        return f, out_type

    def _array(self, f: FunDecl, t: Type, path: str, what: str = "an array") -> ArrayType:
        if not isinstance(t, ArrayType):
            self.fail(f, path, what, t)
        return t

    def map_AbstractMap(self, f: P.AbstractMap, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        g, out = self.fun(f.f, [a.elem], _join(path, "f"))
        return replace(f, f=g), ArrayType(out, a.length)

    def _operator(self, f: P.Fold, a: ArrayType, path: str):
        """A fold's initial value and operator, typed at the accumulator's and the element's types."""
        init = self.expr(f.init, _join(path, "init"))
        g, out = self.fun(f.f, [init.t, a.elem], _join(path, "f"))
        return init, g, out

    def map_AbstractReduce(self, f: P.AbstractReduce, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        init, g, out = self._operator(f, a, path)
        if out != init.t:
            self.fail(f, path, f"an operator returning the type of its initial value {init.t}", f"one returning {out}")
        if isinstance(f, P.Reduce) and a.elem != init.t:
            raise LiftTypeError(f"{_name(f)} needs an associative operator of type (T, T) -> T, got one of type "
                                f"({init.t}, {a.elem}) -> {out} (at {path or 'the root'}); a fold whose accumulator "
                                f"is not an element is written with ReduceSeq (a sequential fold from the left)")
        return replace(f, f=g, init=init), ArrayType(out, Cst(1))

    def map_PartRed(self, f: P.PartRed, arg_types: list, path: str):
        annotated, _ = self.map_AbstractReduce(f, arg_types, path)
        a, t = arg_types[0], annotated.init.t
        if a.elem != t:
            self.fail(f, path, f"an array of {t} (the initial value's type)", a)
        self.divisible(f, a.length, f.m, path)
        return annotated, ArrayType(t, f.m)

    def map_MapAccumSeq(self, f: P.MapAccumSeq, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        init, g, out = self._operator(f, a, path)
        if not (isinstance(out, TupleType) and len(out.elems) == 2 and out.elems[1] == init.t):
            self.fail(f, path, f"a function returning <an element, the next accumulator of type {init.t}>",
                      f"one returning {out}")
        return replace(f, f=g, init=init), TupleType(ArrayType(out.elems[0], a.length), ArrayType(init.t, Cst(1)))

    def _arrays(self, f, arg_types: list, path: str, same, what: str) -> list:
        """The argument types of a pattern of two or more arrays (zip, concat), which agree in `same`."""
        if f.n < 2:
            self.fail(f, path, "two or more arrays", f"{f.n}")
        arrays = [self._array(f, t, path, "arrays") for t in arg_types]
        if any(same(a) != same(arrays[0]) for a in arrays[1:]):
            self.fail(f, path, what, ", ".join(str(t) for t in arrays))
        return arrays

    def map_Zip(self, f: P.Zip, arg_types: list, path: str):
        arrays = self._arrays(f, arg_types, path, lambda a: a.length, "arrays of one length")
        return f, ArrayType(TupleType(*(a.elem for a in arrays)), arrays[0].length)

    def map_Concat(self, f: P.Concat, arg_types: list, path: str):
        arrays = self._arrays(f, arg_types, path, lambda a: a.elem, "arrays of one element type")
        return f, ArrayType(arrays[0].elem, sum((a.length for a in arrays[1:]), arrays[0].length))

    def map_Unzip(self, f: P.Unzip, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path, "an array of tuples")
        if not isinstance(a.elem, TupleType):
            self.fail(f, path, "an array of tuples", a)
        return f, TupleType(*(ArrayType(e, a.length) for e in a.elem.elems))

    def map_Tuple(self, f: P.Tuple, arg_types: list, path: str):
        return f, TupleType(*arg_types)

    def map_Get(self, f: P.Get, arg_types: list, path: str):
        t = arg_types[0]
        if not isinstance(t, TupleType) or not 0 <= f.i < len(t.elems):
            self.fail(f, path, f"a tuple of at least {f.i + 1} components", t)
        return f, t.elems[f.i]

    def map_Split(self, f: P.Split, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        self.divisible(f, a.length, f.n, path)
        return f, ArrayType(ArrayType(a.elem, f.n), a.length / f.n)

    def map_Join(self, f: P.Join, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path, "an array of arrays")
        inner = self._array(f, a.elem, path, "an array of arrays") if isinstance(a.elem, ArrayType) else \
            self.fail(f, path, "an array of arrays", a)
        return f, ArrayType(inner.elem, a.length * inner.length)

    def map_Iterate(self, f: P.Iterate, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        if not f.n.is_constant:
            self.fail(f, path, "a constant number of iterations", f.n)
        g, t = f.f, a
        annotated = None
        for _ in range(f.n.value):
            step_g, out = self.fun(g, [t], _join(path, "f"))
            if annotated is None:
                annotated = step_g
            out_a = self._array(f, out, path, "a function from arrays to arrays")
            if out_a.elem != a.elem:
                self.fail(f, path, f"a function that keeps the element type {a.elem}", out_a.elem)
            if length_ratio(out_a.length, t.length) is None:
                self.fail(f, path, "a function that changes the length by a constant factor", f"{t} -> {out_a}")
            t = out_a
        return replace(f, f=annotated if annotated is not None else g), t

    def map_IterateHost(self, f: P.IterateHost, arg_types: list, path: str):
        """Typed once: every launch of the step reads and writes buffers of its input's type."""
        a = self._array(f, arg_types[0], path)
        if not f.n.is_constant:
            self.fail(f, path, "a constant number of iterations", f.n)
        g, out = self.fun(f.f, [a], _join(path, "f"))
        if out != a:
            self.fail(f, path, f"a step that keeps its array's type {a}", out)
        return replace(f, f=g), a

    def map_Reorder(self, f: P.Reorder, arg_types: list, path: str):
        return f, self._array(f, arg_types[0], path)

    def map_Id(self, f: P.Id, arg_types: list, path: str):
        return f, arg_types[0]

    def map_ReorderStride(self, f: ReorderStride, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        self.divisible(f, a.length, f.s, path)
        return f, a

    def map_Transpose(self, f: P.Transpose, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path, "a 2-D array")
        inner = a.elem if isinstance(a.elem, ArrayType) else self.fail(f, path, "a 2-D array", a)
        return f, ArrayType(ArrayType(inner.elem, a.length), inner.length)

    def map_Slide(self, f, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        if f.size < 1 or f.step < 1:
            self.fail(f, path, "a positive window size and step", f"size {f.size}, step {f.step}")
        if a.length.is_constant and a.length.value < f.size:
            self.fail(f, path, f"an array of at least {f.size} elements", a)
        self.divisible(f, a.length - f.size, Cst(f.step), path)
        return f, ArrayType(ArrayType(a.elem, f.size), (a.length - f.size) / f.step + 1)

    def map_MapSeqSlide(self, f: P.MapSeqSlide, arg_types: list, path: str):
        """`map-seq(f) ∘ slide(size, step)`, its windows no longer than `size` and shifted by at most that."""
        _, windows = self.map_Slide(f, arg_types, path)
        if f.step > f.size:
            self.fail(f, path, "a step no larger than the window", f"size {f.size}, step {f.step}")
        g, out = self.fun(f.f, [windows.elem], _join(path, "f"))
        return replace(f, f=g), ArrayType(out, windows.length)

    def map_Pad(self, f: P.Pad, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        scalar = a.elem
        while isinstance(scalar, ArrayType):  # a constant pads arrays of arrays with that scalar everywhere
            scalar = scalar.elem
        if isinstance(f.boundary, Literal) and f.boundary.t != scalar:
            self.fail(f, path, f"a boundary value of the element type {scalar}", f.boundary.t)
        if f.boundary == "mirror" and a.length.is_constant and a.length.value < max(f.left, f.right):
            self.fail(f, path, f"an array of at least {max(f.left, f.right)} elements to mirror", a)
        return f, ArrayType(a.elem, a.length + f.left + f.right)

    def map_PadToMultiple(self, f: P.PadToMultiple, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        if f.n.is_constant and f.n.value <= 0:
            self.fail(f, path, "a positive multiple", f.n)
        scalar = a.elem
        while isinstance(scalar, ArrayType):
            scalar = scalar.elem
        if not isinstance(f.value, str) and f.value.t != scalar:
            self.fail(f, path, f"a padding value of the element type {scalar}", f.value.t)
        return f, ArrayType(a.elem, padded_length(a.length, f.n))

    def map_Take(self, f: P.Take, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        if f.n.is_constant and (f.n.value < 0 or (a.length.is_constant and f.n.value > a.length.value)):
            self.fail(f, path, f"an array of at least {f.n} elements", a)
        return f, ArrayType(a.elem, f.n)

    def map_Drop(self, f: P.Drop, arg_types: list, path: str):
        a = self._array(f, arg_types[0], path)
        if f.n.is_constant and (f.n.value < 0 or (a.length.is_constant and f.n.value > a.length.value)):
            self.fail(f, path, f"an array of at least {f.n} elements", a)
        return f, ArrayType(a.elem, a.length - f.n)

    def map_AddressSpaceCast(self, f: AddressSpaceCast, arg_types: list, path: str):
        g, out = self.fun(f.f, arg_types, _join(path, "f"))
        return replace(f, f=g), out

    def map_AsVector(self, f: AsVector, arg_types: list, path: str):
        def vec(t: Type, where: str) -> Type:
            a = self._array(f, t, where, "an array of scalars")
            if isinstance(a.elem, ArrayType):
                return ArrayType(vec(a.elem, where), a.length)
            if not isinstance(a.elem, ScalarType):
                self.fail(f, where, "an array of scalars", a)
            self.divisible(f, a.length, Cst(f.n), where)
            return ArrayType(VectorType(a.elem, f.n), a.length / f.n)

        return f, vec(arg_types[0], path)

    def map_AsScalar(self, f: AsScalar, arg_types: list, path: str):
        def scal(t: Type) -> Type:
            a = self._array(f, t, path, "an array of vectors")
            if isinstance(a.elem, ArrayType):
                return ArrayType(scal(a.elem), a.length)
            if not isinstance(a.elem, VectorType):
                self.fail(f, path, "an array of vectors", a)
            return ArrayType(a.elem.elem, a.length * a.elem.width)

        return f, scal(arg_types[0])


def _userfun_arg_fits(want: Type, got: Type) -> bool:
    """Arguments match parameter types exactly, except that an array parameter takes any length."""
    if isinstance(want, ArrayType) and isinstance(got, ArrayType):
        return _userfun_arg_fits(want.elem, got.elem)
    return want == got


def infer_fun(f: FunDecl, arg_types: list) -> tuple:
    """Annotate a function applied to arguments of `arg_types`: `(annotated f, result type)`.

    The code generator uses it to type an iteration's body with a symbolic length (`iterate`).
    """
    return TypeInference().fun(f, list(arg_types), "")


def padded_length(length: ArithExpr, n: ArithExpr) -> ArithExpr:
    """`n * ceil(length / n)`: the length of `pad-to-multiple-n` of an array of `length` elements (`length`
    itself where `n` divides it)."""
    if length == n or (n.is_constant and length.is_divisible_by(n.value)):
        return length
    return (length + n - 1) // n * n


def length_ratio(out: ArithExpr, inp: ArithExpr) -> Optional[tuple]:
    """`out/inp` as `(p, q)` when it is a constant `p/q` with `p` or `q` equal to 1 (iterate's shrink factor)."""
    for num, den, flip in ((out, inp, False), (inp, out, True)):
        try:
            r = num / den
        except NotDivisible:
            continue
        if not r.free_vars():
            try:
                k = r.value
            except NotDivisible:
                continue
            return (1, k) if flip else (k, 1)
    return None
