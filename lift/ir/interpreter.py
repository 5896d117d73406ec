"""The reference interpreter: what every pattern means, evaluated on whole numpy arrays.

Rules, generated kernels and explored candidates are all checked against `interpret`. It is vectorised:
a `map(f)` does not loop; it evaluates `f` once with one more *batch* axis, so that a value inside `k`
nested maps is a numpy array whose first `k` axes index the enclosing maps' elements. Under the batch
axes, a value of type `T` has the layout of `lift.ir.binding.host_shape(T)`, except that a tuple is a
Python tuple of component values (structure of arrays: `lift.ir.interpreter_values`). Array patterns therefore
act on the axis just after the batch axes: `split-n` is a reshape, `join` a reshape, `transpose` a swap of axes.

A map whose body maps over whole arrays (an all-pairs N-body: `n^2` pairs) would make arrays of every
pair at once; it is evaluated in chunks of its elements, sized by a run on its first element so that no
batch exceeds `CHUNK_ELEMENTS` elements.

Reductions by an operator that is a numpy ufunc (`x + y`, `x * y`, `max`, `min`: `lift.ir.ufuncs`) are
one `ufunc.reduce`, and `reduce(+) ∘ map(*) ∘ zip(a, b)` is one contraction (`lift.ir.contraction`: matrix
multiply is a BLAS call); a fold `λ acc, x. u(acc, g(x))` with such a `u` is a map of `g` and a `u.reduce`.
Other reductions with an operator of type `(T, T) -> T` (associative and commutative, as `reduce`
requires) combine halves pairwise, `log2 n` vectorised steps; folds with an accumulator of another type
(MD's `reduce-seq`) step through the array, vectorised over every other axis. Only the rounding of
floating-point sums depends on these orders, as it does between the reference and a kernel.
Low-level patterns mean what their high-level twins mean; `reorder-stride-s` really permutes
(`out[i] = in[i/n + s*(i mod n)]`, paper 3.2) so that a misplaced one shows.
"""

from __future__ import annotations

import functools
import math
from contextlib import contextmanager
from typing import Mapping, Optional

import numpy as np

from lift.errors import LiftEvalError, LiftSizeError
from lift.ir import patterns as P
from lift.ir.associativity import is_associative
from lift.ir.binding import bind_sizes, host_dtype, host_shape, to_host
from lift.ir.contraction import contract, reduce_axis
from lift.ir.interpreter_values import as_host, concat, first_leaf, from_host, leaves, numpy_shaped, slice_value, stack
from lift.ir.mapper import Mapper
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param, free_params
from lift.ir.opencl_patterns import AddressSpaceCast, AsScalar, AsVector, ReorderStride, Vectorize
from lift.ir.routine import Routine
from lift.ir.typecheck import infer
from lift.ir.ufuncs import multiplies_pair, split_accumulation, ufunc_of
from lift.ir.userfun import UserFun, vectorized_in_types, vectorized_type
from lift.ir.userfun_numpy import BatchedArray
from lift.types.arith import NotDivisible, UnboundSize
from lift.types.types import ArrayType, TupleType, Type, VectorType, element_type

# The most elements of a batch a map's body is evaluated on at once (arrays of 16 MB of float4).
CHUNK_ELEMENTS = 1 << 20


def interpret(program: Lambda, *inputs, sizes: Optional[Mapping[str, int]] = None, numpy_shapes: bool = False):
    """Evaluate `program` on numpy inputs; return numpy (a structured array for arrays of tuples).

    A program whose result is a tuple with array components (several outputs) returns a Python tuple
    of its components, each as a single-output program would return it. The result has the host shape of
    its type (a reduction's `[T]_1` has shape `(1,)`), or with `numpy_shapes` numpy's, as a compiled program
    returns it (`lift.ir.binding.result_shape`: a full reduction is 0-d).

    Sizes are bound from the input shapes (and `sizes`), then checked against the program's constraints.
    """
    typed = infer(program)
    names = [p.name for p in typed.expr.params]
    bound = bind_sizes(typed.param_types, inputs, names, sizes)
    typed.check_sizes(bound)
    ev = Interpreter(bound)
    env = {}
    for p, v in zip(typed.expr.params, inputs):
        env[p.name] = (from_host(to_host(v, p.t, p.name), p.t), ())
    ev.env = env
    result = as_host(ev.expr(typed.expr.body), typed.type)
    return numpy_shaped(result, typed.type, bound) if numpy_shapes else result


def _dimensions(t: Type) -> int:
    """The numpy dimensions of a value of `t`: its arrays', and a vector's lanes."""
    return 1 + _dimensions(t.elem) if isinstance(t, ArrayType) else int(isinstance(t, VectorType))


class Interpreter(Mapper):
    """Evaluates annotated expressions: one `map_<Pattern>(f, args, arg_exprs)` per function class gives the
    value of `f` applied to the values `args` (of the expressions `arg_exprs`, when known). `batch` is the
    shape of the enclosing maps' batch axes."""

    def __init__(self, sizes: Mapping[str, int]):
        self.sizes = dict(sizes)
        self.batch: tuple = ()
        self.env: dict = {}
        self.depth = 0
        self.shared: dict = {}
        self.outer_values: dict = {}
        self.widest = 0  # the most elements of any batch since the last `apply_map` looked

    @contextmanager
    def batched(self, n: int):
        """Evaluate under one more batch axis, of length `n`."""
        saved = self.batch
        self.batch = saved + (n,)
        self.widest = max(self.widest, math.prod(self.batch))
        try:
            yield
        finally:
            self.batch = saved

    def size(self, n) -> int:
        try:
            return int(n.eval(self.sizes))
        except (UnboundSize, NotDivisible) as e:
            raise LiftSizeError(str(e)) from None

    @property
    def d(self) -> int:
        return len(self.batch)

    # --- expressions ---------------------------------------------------------------------------------

    def expr(self, e: Expr):
        if isinstance(e, Param):
            value, batch = self.env[e.name]
            return self.lift_to_batch(value, batch)
        if isinstance(e, Literal):
            return self.literal(e)
        if isinstance(e, FunCall):
            if self.batch:
                outer = self.outer_batch(e)
                if outer is not None and outer != self.batch:
                    return self.lift_to_batch(self.once_per_element(e, outer), outer)
            top = self.depth == 0 and not self.batch
            if top and e in self.shared:
                return self.shared[e]
            value = self.contraction(e)
            if value is None:
                args = [self.expr(a) for a in e.args]
                value = self.call(e.f, args, e.args)
            if top:
                self.shared[e] = value
            return value
        raise LiftEvalError(f"cannot evaluate {e!r}")

    def contraction(self, e: FunCall):
        """`reduce(u, z)(map(mult)(zip(a, b)))`, `u` addition, as `u(z, contract(a, b))`; None for other calls.
        (`mult` multiplies two numbers of one type, so that `a` and `b` are arrays of one shape and type, except
        where a vectorised `mult` broadcasts a scalar to a vector's lanes: the call is then evaluated as it is.)"""
        red = e.f
        if not (isinstance(red, (P.Reduce, P.ReduceSeq)) and ufunc_of(red.f) is np.add):
            return None
        mapped = e.args[0]
        if not (isinstance(mapped, FunCall) and isinstance(mapped.f, P.AbstractMap) and multiplies_pair(mapped.f.f)):
            return None
        zipped = mapped.args[0]
        if not (isinstance(zipped, FunCall) and isinstance(zipped.f, P.Zip) and zipped.f.n == 2):
            return None
        a, b = (np.asarray(self.expr(x)) for x in zipped.args)
        if a.shape != b.shape:  # a vector times a scalar broadcast to its lanes (`vectorize-n(mult)`)
            return None
        total = contract(a, b, self.d)
        acc = self.call(red.f, [self.expr(red.init), total])
        return leaves(lambda v: np.expand_dims(v, self.d), acc)

    def invariant(self, e: Expr) -> bool:
        """Whether `e` reads only values bound outside every enclosing map (a sum of an input inside a map)."""
        return self.outer_batch(e) == ()

    def outer_batch(self, e: Expr) -> Optional[tuple]:
        """The batch axes of the innermost enclosing map whose element `e` reads (None if it reads a value bound
        elsewhere): `e` is computed once per element of that map, not of the maps inside it (a row's sum inside
        the map over the row's elements)."""
        batches = [self.env.get(p.name, (None, None))[1] for p in free_params(e)]
        if any(b is None for b in batches):
            return None
        return max(batches, key=len, default=())

    def once_per_element(self, e: Expr, batch: tuple):
        """`e` under the batch axes `batch` of an enclosing map (`at_batch`), computed again only when a value it
        reads is another: attention's scores of a query row, read by their maximum, their exponentials and their
        sum inside maps over the row, and the row's weights read in every chunk of a map over columns, are
        computed once per evaluation of the map over rows."""
        reads = tuple(self.env[p.name][0] for p in sorted(free_params(e), key=lambda p: p.name))
        known = self.outer_values.get((e, batch))
        if known is not None and len(known[0]) == len(reads) and all(a is b for a, b in zip(known[0], reads)):
            return known[1]
        value = self.at_batch(e, batch)
        self.outer_values[(e, batch)] = (reads, value)
        return value

    def unbatched(self, e: Expr):
        """The value of the invariant `e`, computed once, outside the enclosing maps' batch axes."""
        return self.at_batch(e, ())

    def at_batch(self, e: Expr, batch: tuple):
        """The value of `e` under the batch axes `batch` of some enclosing maps, computed once per their element."""
        saved, self.batch = self.batch, batch
        try:
            return self.expr(e)
        finally:
            self.batch = saved

    def literal(self, lit: Literal):
        dtype = host_dtype(lit.t)
        if isinstance(lit.t, ArrayType):
            return np.broadcast_to(np.asarray(lit.value, dtype), self.batch + host_shape(lit.t, self.sizes))
        if isinstance(lit.t, VectorType):
            value = lit.value if isinstance(lit.value, tuple) else (lit.value,) * lit.t.width
            return np.broadcast_to(np.asarray(value, dtype), self.batch + (lit.t.width,))
        return np.broadcast_to(np.asarray(lit.value, dtype), self.batch)

    def lift_to_batch(self, value, batch: tuple):
        """A value computed under fewer enclosing maps, broadcast over the current batch axes."""
        if batch == self.batch:
            return value
        extra = len(self.batch) - len(batch)

        def expand(a):
            a = a.reshape(batch + (1,) * extra + a.shape[len(batch):])
            return np.broadcast_to(a, self.batch + a.shape[len(self.batch):])

        return leaves(expand, value)

    # --- functions -------------------------------------------------------------------------------------

    def call(self, f: FunDecl, args: list, arg_exprs=()):
        if f.arity > 1 and len(args) == 1 and isinstance(args[0], tuple) and len(args[0]) == f.arity:
            args = list(args[0])
            arg_exprs = ()
        return self(f, args, arg_exprs)

    def map_default(self, f: FunDecl, args: list, arg_exprs):
        raise LiftEvalError(f"the interpreter has no meaning for {type(f).__name__}")

    def map_Lambda(self, f: Lambda, args: list, arg_exprs):
        saved = self.env
        self.env = dict(saved)
        self.depth += 1
        for p, v in zip(f.params, args):
            self.env[p.name] = (v, self.batch)
        try:
            return self.expr(f.body)
        finally:
            self.env = saved
            self.depth -= 1

    def map_Routine(self, f: Routine, args: list, arg_exprs):
        """A routine means its lambda; its body sees only its own parameters."""
        saved, self.env = self.env, {}
        try:
            return self.map_Lambda(f.lam, args, arg_exprs)
        finally:
            self.env = saved

    def map_UserFun(self, f: UserFun, args: list, arg_exprs, in_types=None, out_type=None):
        if f.python is None:
            raise LiftEvalError(
                f"user function {f.name} has only an OpenCL C body: give UserFun(..., python=...) "
                "a numpy equivalent to evaluate it")
        in_types = f.in_types if in_types is None else in_types
        call_args = []
        for i, (t, v) in enumerate(zip(in_types, args)):
            if isinstance(t, ArrayType) and not isinstance(v, BatchedArray):
                v = self.unbatched_array(v, arg_exprs[i] if i < len(arg_exprs) else None, f)
            call_args.append(v)
        out_type = f.out_type if out_type is None else out_type
        try:
            with np.errstate(all="ignore"):
                result = f.python(*call_args)
        except LiftEvalError:
            raise
        except Exception as e:
            raise LiftEvalError(f"user function {f.name} failed in the interpreter: {type(e).__name__}: {e}") from None
        return self.fill_batch(result, out_type)

    def fill_batch(self, value, t: Type):
        """A user function's result with every batch axis present (a constant result has none)."""
        if isinstance(t, TupleType):
            return tuple(self.fill_batch(v, e) for v, e in zip(value, t.elems))
        lanes = (t.width,) if isinstance(t, VectorType) else ()
        return np.broadcast_to(np.asarray(value, host_dtype(t)), self.batch + lanes)

    def unbatched_array(self, v, e: Optional[Expr], f: UserFun):
        """Array arguments of user functions are passed whole, as written outside every map; one that differs
        between the elements of the batch (a row of a matrix inside the map over its rows) is passed as a
        `BatchedArray` to a user function written in Python."""
        if isinstance(e, Param) and self.env[e.name][1] == ():
            return self.env[e.name][0]
        if isinstance(e, FunCall) and self.invariant(e):
            return self.unbatched(e)
        if self.d == 0:
            return v
        if getattr(f.python, "takes_batched_arrays", False):
            return BatchedArray(v, self.d)
        raise LiftEvalError(
            f"user function {f.name}: an array argument computed inside a map is not supported by the "
            "interpreter; pass an input array")

    def map_Vectorize(self, f: Vectorize, args: list, arg_exprs):
        if isinstance(f.f, P.Id):
            return args[0]
        arg_types = tuple(e.t for e in arg_exprs) if len(arg_exprs) == len(args) else f.f.in_types
        in_types = vectorized_in_types(f.f, f.n, arg_types)
        args = [self.broadcast_lanes(a, t) for a, t in zip(args, in_types)]
        return self.map_UserFun(f.f, args, arg_exprs, in_types, vectorized_type(f.f.out_type, f.n))

    def broadcast_lanes(self, value, t: Type):
        """A scalar argument of a vectorised function, broadcast to every lane; an array of vectors, one array per
        lane (`BatchedArray`: the lanes a batch axis after the map's, as they are for the vectors of the
        function's scalars)."""
        if isinstance(t, VectorType) and np.ndim(value) == self.d:
            return np.broadcast_to(np.asarray(value)[..., None], self.batch + (t.width,))
        if isinstance(t, ArrayType) and isinstance(element_type(t), VectorType):
            value = np.asarray(value)
            own = value.shape[value.ndim - _dimensions(t):]
            return BatchedArray(np.moveaxis(np.broadcast_to(value, self.batch + own), -1, self.d), self.d + 1)
        return value

    def map_AbstractMap(self, f: P.AbstractMap, args: list, arg_exprs):
        return self.apply_map(f.f, args[0])

    def apply_map(self, g: FunDecl, x):
        """`g` applied to every element of `x` (along the axis after the batch axes): at once, or in chunks
        when the elements of `x` and the arrays in scope say that `g` may make batches of more than
        `CHUNK_ELEMENTS` elements; the first element's run measures how many each element makes."""
        d = self.d
        n = first_leaf(x).shape[d]
        outer = math.prod(self.batch)
        if n <= 1 or not _iterates(g) or outer * n * self.largest_element(x) <= CHUNK_ELEMENTS:
            with self.batched(n):
                return self.call(g, [x])
        widest, self.widest = self.widest, 0
        with self.batched(1):
            parts = [self.call(g, [slice_value(x, d, 0, 1)])]
        chunk = max(1, CHUNK_ELEMENTS // max(self.widest, outer))
        for start in range(1, n, chunk):
            stop = min(start + chunk, n)
            with self.batched(stop - start):
                parts.append(self.call(g, [slice_value(x, d, start, stop)]))
        self.widest = max(widest, self.widest)
        return concat(parts, d)

    def largest_element(self, x) -> int:
        """The most scalars in one element of `x` or in the unbatched value of anything in scope: a bound on
        the arrays a function of one element maps over, when it makes none larger."""
        d = self.d

        def elements(value, batch_axes: int) -> int:
            if isinstance(value, tuple):
                return sum(elements(v, batch_axes) for v in value)
            return math.prod(np.shape(value)[batch_axes:])

        own = elements(x, d + 1)
        return max([own] + [elements(v, len(batch)) for v, batch in self.env.values()])

    def map_AbstractReduce(self, f: P.AbstractReduce, args: list, arg_exprs):
        (x,) = args
        init = self.expr(f.init)
        acc = self.fold(f.f, init, x, f.init.t, associative=f.thread_level != "seq" and is_associative(f.f))
        return leaves(lambda a: np.expand_dims(a, self.d), acc)

    def map_MapAccumSeq(self, f: P.MapAccumSeq, args: list, arg_exprs):
        (x,) = args
        d = self.d
        acc, ys = self.expr(f.init), []
        for i in range(first_leaf(x).shape[d]):
            y, acc = self.call(f.f, [acc, leaves(lambda a: np.take(a, i, axis=d), x)])
            ys.append(y)
        return stack(ys, d), leaves(lambda a: np.expand_dims(a, d), acc)

    def map_PartRed(self, f: P.PartRed, args: list, arg_exprs):
        (x,) = args
        m = self.size(f.m)
        n = first_leaf(x).shape[self.d]
        d = self.d
        chunks = leaves(lambda a: a.reshape(a.shape[:d] + (m, n // m) + a.shape[d + 1:]), x)
        with self.batched(m):
            return self.fold(f.f, self.expr(f.init), chunks, f.init.t, associative=True)

    def fold(self, op: FunDecl, init, x, acc_type: Type, associative: bool):
        """`op` folded over the array axis of `x` (the axis after the batch axes), starting from `init`.

        An operator that is a ufunc reduces with it, in the ufunc's order, and a fold `λ acc, x. u(acc, g(x))`
        is a map of `g` reduced by `u` (`lift.ir.ufuncs`). Otherwise `reduce` of an operator known to be
        associative and commutative (`lift.ir.associativity`) and `part-red` combine halves pairwise;
        `reduce-seq`, and `reduce` of any other operator, fold element after element.
        """
        d = self.d
        n = first_leaf(x).shape[d]
        if n == 0:
            return init
        u = ufunc_of(op)
        if u is not None and self.elem_type_of(op) == acc_type:
            return self.call(op, [init, leaves(lambda a: reduce_axis(u, a, d), x)])
        split = split_accumulation(op)
        if split is not None:
            u, g = split
            total = reduce_axis(u, np.asarray(self.apply_map(g, x)), d)
            with np.errstate(all="ignore"):
                return np.asarray(u(init, total), total.dtype)
        if associative and self.elem_type_of(op) == acc_type and n > 1:
            while n > 1:
                h = n // 2
                lo = slice_value(x, d, 0, h)
                hi = slice_value(x, d, h, 2 * h)
                with self.batched(h):
                    pairs = self.call(op, [lo, hi])
                if n % 2:
                    pairs = concat([pairs, slice_value(x, d, n - 1, n)], d)
                x = pairs
                n = first_leaf(x).shape[d]
        acc = init
        for i in range(n):
            acc = self.call(op, [acc, leaves(lambda a: np.take(a, i, axis=d), x)])
        return acc

    def elem_type_of(self, op: FunDecl) -> Optional[Type]:
        """The element type an operator expects (its second parameter), when it is declared or inferred."""
        if isinstance(op, Lambda):
            return op.params[1].t
        if isinstance(op, UserFun):
            return op.in_types[1]
        if isinstance(op, Vectorize) and isinstance(op.f, UserFun):
            return vectorized_type(op.f.in_types[1], op.n)
        return None

    def map_Iterate(self, f: P.Iterate, args: list, arg_exprs):
        x = args[0]
        for _ in range(self.size(f.n)):
            x = self.call(f.f, [x])
        return x

    map_IterateHost = map_Iterate

    def map_Zip(self, f: P.Zip, args: list, arg_exprs):
        return tuple(args)

    def map_Concat(self, f: P.Concat, args: list, arg_exprs):
        return concat(list(args), self.d)

    def map_Tuple(self, f: P.Tuple, args: list, arg_exprs):
        return tuple(args)

    def map_Unzip(self, f: P.Unzip, args: list, arg_exprs):
        """An array of tuples is already a tuple of component arrays here (structure of arrays)."""
        return tuple(args[0])

    def map_Get(self, f: P.Get, args: list, arg_exprs):
        return args[0][f.i]

    def map_Split(self, f: P.Split, args: list, arg_exprs):
        k, d = self.size(f.n), self.d
        return leaves(lambda a: a.reshape(a.shape[:d] + (a.shape[d] // k, k) + a.shape[d + 1:]), args[0])

    def map_Join(self, f: P.Join, args: list, arg_exprs):
        d = self.d
        return leaves(lambda a: a.reshape(a.shape[:d] + (a.shape[d] * a.shape[d + 1],) + a.shape[d + 2:]), args[0])

    def map_Transpose(self, f: P.Transpose, args: list, arg_exprs):
        return leaves(lambda a: np.swapaxes(a, self.d, self.d + 1), args[0])

    def map_ReorderStride(self, f: ReorderStride, args: list, arg_exprs):
        s, d = self.size(f.s), self.d

        def permute(a):
            n = a.shape[d]
            grid = a.reshape(a.shape[:d] + (n // s, s) + a.shape[d + 1:])
            return np.swapaxes(grid, d, d + 1).reshape(a.shape)

        return leaves(permute, args[0])

    def map_Id(self, f: P.Id, args: list, arg_exprs):
        return args[0]

    def map_Reorder(self, f: P.Reorder, args: list, arg_exprs):
        """The identity is one of the permutations `reorder` may choose."""
        return args[0]

    def map_MapSeqSlide(self, f: P.MapSeqSlide, args: list, arg_exprs):
        return self.apply_map(f.f, self.map_Slide(f, args, arg_exprs))

    def map_Slide(self, f, args: list, arg_exprs):
        d = self.d

        def windows(a):
            w = np.lib.stride_tricks.sliding_window_view(a, f.size, axis=d)
            w = np.moveaxis(w, -1, d + 1)
            return np.take(w, np.arange(0, w.shape[d], f.step), axis=d)

        return leaves(windows, args[0])

    def map_Pad(self, f: P.Pad, args: list, arg_exprs):
        d = self.d
        mode = {"clamp": "edge", "wrap": "wrap", "mirror": "symmetric"}

        def pad(a, constant=None):
            widths = [(0, 0)] * a.ndim
            widths[d] = (f.left, f.right)
            if constant is None:
                return np.pad(a, widths, mode=mode[f.boundary])
            return np.pad(a, widths, mode="constant", constant_values=constant)

        if isinstance(f.boundary, str):
            return leaves(pad, args[0])
        value = f.boundary.value
        return pad(np.asarray(args[0]), value)

    def map_PadToMultiple(self, f: P.PadToMultiple, args: list, arg_exprs):
        k, d = self.size(f.n), self.d

        def pad(a):
            widths = [(0, 0)] * a.ndim
            widths[d] = (0, -a.shape[d] % k)
            if isinstance(f.value, str):
                return np.pad(a, widths, mode="edge")
            return np.pad(a, widths, mode="constant", constant_values=f.value.value)

        return leaves(pad, args[0])

    def map_Take(self, f: P.Take, args: list, arg_exprs):
        k, d = self.size(f.n), self.d
        return leaves(lambda a: a[(slice(None),) * d + (slice(0, k),)], args[0])

    def map_Drop(self, f: P.Drop, args: list, arg_exprs):
        k, d = self.size(f.n), self.d
        return leaves(lambda a: a[(slice(None),) * d + (slice(k, None),)], args[0])

    def map_AddressSpaceCast(self, f: AddressSpaceCast, args: list, arg_exprs):
        return self.call(f.f, args, arg_exprs)

    def map_AsVector(self, f: AsVector, args: list, arg_exprs):
        return leaves(lambda a: a.reshape(a.shape[:-1] + (a.shape[-1] // f.n, f.n)), args[0])

    def map_AsScalar(self, f: AsScalar, args: list, arg_exprs):
        return leaves(lambda a: a.reshape(a.shape[:-2] + (a.shape[-2] * a.shape[-1],)), args[0])


@functools.lru_cache(maxsize=1024)
def _iterates(f: FunDecl) -> bool:
    """Whether `f` holds a pattern that iterates over an array (a map, a reduction, an iteration): only then
    can its batches be wider than its argument's."""
    if isinstance(f, P.Pattern) and f.funs and not isinstance(f, AddressSpaceCast):
        return True
    return any(_iterates(c) if isinstance(c, FunDecl) else _iterates_in(c) for _, c in f.children())


def _iterates_in(e: Expr) -> bool:
    return any(_iterates(c) if isinstance(c, FunDecl) else _iterates_in(c) for _, c in e.children())


