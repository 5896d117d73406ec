"""Lift's patterns: the high-level algorithmic patterns (paper Table 1) and the OpenCL patterns (Table 2).

Each pattern is a function declaration applied to exactly one array (zip and tuple construction take
several values). High-level patterns say *what* is computed; OpenCL patterns say *how* (thread
hierarchy, memory, vectorisation) and mean exactly what their high-level twins mean: `MapWrg(f)` is
`Map(f)` and `ReduceSeq(f, z)` is `Reduce(f, z)`, which is what makes the rewrite rules provable. The OpenCL
maps and reductions are here, with their twins; reorder-stride, the address-space casts and the vector patterns
are in `lift.ir.opencl_patterns`.

DSL conventions, as in Lift: `MapWrg(f)` is dimension 0 and `MapWrg(1)(f)` names the dimension;
`Zip(x, y)` and `Tuple(a, b)` apply directly to values; `Join()`, `AsScalar()`, `Reorder()`,
`Transpose()` and `Id()` take no arguments; `Vectorize(4, 0.0)` is a `float4` literal.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Union

from lift.errors import LiftTypeError
from lift.ir.nodes import Expr, FunCall, FunDecl, Lambda, Literal, Param, to_expr, to_fundecl
from lift.types.arith import ArithExpr, as_arith


HIGH, OPENCL_LEVEL, ANY = "high-level", "opencl", "any"


class Pattern(FunDecl):
    """A pattern and its traits, which every pass reads instead of keeping its own list of classes.

    - `paper`: its name in the paper's notation; `funs`: its function-valued fields.
    - `level`: `HIGH` for the algorithmic patterns the code generator does not know (Table 1, not bold in
      Figures 3-4: they must be lowered first), `OPENCL_LEVEL` for the OpenCL patterns (Table 2), `ANY` for
      those both levels share (zip, split, join, ...).
    - `is_view`: a data-layout pattern that computes nothing: the generator turns it into an index function
      over its input (reorder-stride, Section 3.2), never into a loop or a buffer.
    - `thread_level`: for the OpenCL patterns that iterate, on which threads (`"wrg"`, `"lcl"`, `"glb"`, or
      `"seq"`: one work-item, element after element, in order); None for the others.
    - `nary`: applied directly to several values (`zip(x, y)`, `tuple(a, b)`), its arity its field `n`.
    - `size_field`: the field the paper writes after the name (`split-1024`, `get-0`), or None.
    """

    paper: str = ""
    funs: tuple = ()
    level: str = ANY
    is_view: bool = False
    thread_level = None
    nary: bool = False
    size_field = None

    def __post_init__(self):
        for name in self.funs:
            object.__setattr__(self, name, to_fundecl(getattr(self, name)))


def as_size(n, what: str) -> ArithExpr:
    """`n` as a size expression, for the size field of the pattern `what`; one clear error for anything else."""
    try:
        return as_arith(n)
    except TypeError:
        raise LiftTypeError(f"{what}: expected an integer or a size expression, got {n!r}") from None


# --- maps -------------------------------------------------------------------------------------------


class AbstractMap(Pattern):
    """`map(f)`: `T[n] -> U[n]` for `f: T -> U`. The subclasses place the iterations on OpenCL's threads.

    `thread_level` says on which: `"wrg"` work-groups, `"lcl"` the work-items of a group, `"glb"` all
    work-items, `"seq"` one work-item after another; None for the high-level `map`. `dim` is the OpenCL
    dimension of the parallel maps, 0 for the others.
    """

    funs = ("f",)
    level = OPENCL_LEVEL
    dim = 0


class _DimMap(AbstractMap):
    """A map on one of OpenCL's three dimensions: `MapWrg(f)` is dimension 0, `MapWrg(1)(f)` dimension 1."""

    def __new__(cls, f=None, dim: int = 0):
        if isinstance(f, int) and not isinstance(f, bool):
            return functools.partial(cls, dim=f)
        return super().__new__(cls)

    def __post_init__(self):
        super().__post_init__()
        if self.dim not in (0, 1, 2):
            raise LiftTypeError(f"{type(self).__name__}: dimension must be 0, 1 or 2, got {self.dim}")


@dataclass(frozen=True, eq=False)
class Map(AbstractMap):
    """Apply `f` to every element of the array (Table 1)."""

    f: FunDecl
    paper = "map"
    level = HIGH


@dataclass(frozen=True, eq=False)
class MapSeq(AbstractMap):
    """`map-seq(f)`: the elements one after another, in one thread (Table 2)."""

    f: FunDecl
    paper = "map-seq"
    thread_level = "seq"


@dataclass(frozen=True, eq=False)
class MapSeqUnroll(MapSeq):
    """`map-seq-unroll(f)`: `map-seq(f)` over an array of constant length, its loop unrolled (Lift's
    `MapSeqUnroll`): every index is then a constant, so an OpenCL compiler keeps private arrays indexed by it
    in registers (an array indexed by a loop counter lives in memory)."""

    f: FunDecl
    paper = "map-seq-unroll"


@dataclass(frozen=True, eq=False)
class MapSeqUnswitch(MapSeq):
    """`map-seq-unswitch(f)`: `map-seq(f)`, each iteration testing once whether its vector reads of clamped
    (padded) arrays are all in bounds, and then reading them directly, without a check each (loop unswitching):
    a stencil's block of vector windows tests its edges once per vector of results, not once per read.

    `rolled`: the copy of an iteration that checks each read (at the arrays' edges alone) emits its unrolled maps
    and folds (`map-seq-unroll`, `reduce-seq-unroll`) as loops, a fraction of the kernel's code (a 5x5 window's:
    25 steps, each repeating its checks, against one), where unrolled its indices are constants at each step."""

    f: FunDecl
    rolled: bool = False
    paper = "map-seq-unswitch"


@dataclass(frozen=True, eq=False)
class MapSeqSlide(Pattern):
    """`map-seq-slide(f, size, step)`: `T[n] -> U[(n - size)/step + 1]` for `f: T[size] -> U`, which means
    `map-seq(f) ∘ slide(size, step)` (Lift's `MapSeqSlide`, register rotation for stencils).

    One work-item walks the windows in order, keeping the current one in `size` private variables: each step
    loads only the `step` elements that enter it, applies `f`, and shifts the window by `step`, so that every
    element of the input is read once instead of `size / step` times. Not a map: `f` applies to windows."""

    f: FunDecl
    size: int
    step: int
    funs = ("f",)
    paper = "map-seq-slide"
    level = OPENCL_LEVEL
    thread_level = "seq"


@dataclass(frozen=True, eq=False)
class MapGlb(_DimMap):
    """`map-global(f)`: each global work-item applies `f` to different elements (Table 2)."""

    f: FunDecl
    dim: int = 0
    paper = "map-global"
    thread_level = "glb"


@dataclass(frozen=True, eq=False)
class MapWrg(_DimMap):
    """`map-workgroup(f)`: each work-group applies `f` to different elements (Table 2)."""

    f: FunDecl
    dim: int = 0
    paper = "map-workgroup"
    thread_level = "wrg"


@dataclass(frozen=True, eq=False)
class MapLcl(_DimMap):
    """`map-local(f)`: each work-item of a work-group applies `f` to different elements (Table 2)."""

    f: FunDecl
    dim: int = 0
    paper = "map-local"
    thread_level = "lcl"


# --- reductions -------------------------------------------------------------------------------------


class Fold(Pattern):
    """A pattern that threads an accumulator, starting at `z`, through the elements of an array: `f` takes
    the accumulator and an element (`f: (A, T) -> ...`, `z: A`)."""

    funs = ("f",)

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "init", to_expr(self.init))


class AbstractReduce(Fold):
    """`reduce(f, z)`: `T[n] -> A[1]` for `f: (A, T) -> A`, `z: A`; a fold of the array into one value."""


@dataclass(frozen=True, eq=False)
class Reduce(AbstractReduce):
    """Reduce with an associative and commutative `f: (T, T) -> T` (Table 1): its order is the implementation's
    choice. With an operator not known to be associative (`lift.ir.associativity`) it means `reduce-seq`."""

    f: FunDecl
    init: Expr
    paper = "reduce"
    level = HIGH


@dataclass(frozen=True, eq=False)
class ReduceSeq(AbstractReduce):
    """`reduce-seq(f, z)`: a sequential fold in one thread, `f(...f(f(z, x0), x1)..., xn-1)` (Table 2)."""

    f: FunDecl
    init: Expr
    paper = "reduce-seq"
    level = OPENCL_LEVEL
    thread_level = "seq"


@dataclass(frozen=True, eq=False)
class ReduceSeqUnroll(ReduceSeq):
    """`reduce-seq-unroll(f, z)`: `reduce-seq(f, z)` over an array of constant length, its steps generated one
    after another: every index into the array is then a constant, so that a view's index arithmetic (the
    division and remainder of a `join`, the bounds of a `pad`) folds away at each step."""

    f: FunDecl
    init: Expr
    paper = "reduce-seq-unroll"


@dataclass(frozen=True, eq=False)
class PartRed(AbstractReduce):
    """`part-red(f, z)`: a partial reduction `T[n] -> T[m]`, `1 <= m <= n` (Section 4.1).

    Its result is meaningful only as an intermediate of a full reduction (rule 3(d)); the reference
    interpreter reduces `m` contiguous chunks of `n/m` elements each.
    """

    f: FunDecl
    init: Expr
    m: ArithExpr = 1
    paper = "part-red"
    level = HIGH

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "m", as_size(self.m, "PartRed"))


@dataclass(frozen=True, eq=False)
class MapAccumSeq(Fold):
    """`map-accum-seq(f, z)`: `T[n] -> <U[n], A[1]>` for `f: (A, T) -> <U, A>`, `z: A`: a sequential fold that
    also emits one value per element, Haskell's `mapAccumL` with the pair's order swapped.

    With `(y_i, a_(i+1)) = f(a_i, x_i)` and `a_0 = z`, the result is `([y_0, .., y_(n-1)], [a_n])`. It is the
    one loop that computes a `map-seq` and a `reduce-seq` over the same array (`map-accum-fusion`):
    `tuple(map-seq(g)(x), reduce-seq(h, z)(x)) = map-accum-seq(λacc, e. tuple(g(e), h(acc, e)), z)(x)`.
    """

    f: FunDecl
    init: Expr
    paper = "map-accum-seq"
    level = OPENCL_LEVEL
    thread_level = "seq"


# --- data layout --------------------------------------------------------------------------------------


class _NaryValues(Pattern):
    """A pattern applied directly to several values: `Zip(x, y)` is the call `zip(x, y)`."""

    nary = True

    def __new__(cls, *args, **kwargs):
        if kwargs or (len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool)):
            return super().__new__(cls)
        return cls(len(args))(*args)

    @property
    def arity(self) -> int:
        return self.n


@dataclass(frozen=True, eq=False)
class Zip(_NaryValues):
    """`zip(a, b, ...)`: arrays of equal length `n` to an array of `n` tuples (Table 1)."""

    n: int
    paper = "zip"
    is_view = True


@dataclass(frozen=True, eq=False)
class Concat(_NaryValues):
    """`concat(a, b, ...)`: arrays of one element type, of lengths `m, n, ...`, to one array of `m + n + ...`, their
    elements in order (Lift's `Concat`); `concat(take-h(x), drop-h(x)) = x`.

    A view: reading element `i` reads `a[i]` where `i < m`, else the next array's `[i - m]`. Computed into a
    destination, each array is computed into its own slice of it, `a` into the first `m` elements, `b` into the
    next `n`, with no test of the index (`lift.rules.map_tail`)."""

    n: int
    paper = "concat"
    is_view = True


@dataclass(frozen=True, eq=False)
class Tuple(_NaryValues):
    """Tuple construction: values to one tuple value (BlackScholes returns a pair)."""

    n: int
    paper = "tuple"


@dataclass(frozen=True, eq=False)
class Unzip(Pattern):
    """`unzip`: an array of `n` tuples to a tuple of arrays of length `n`, the inverse of zip (Lift's unzip).

    It lets one computation produce several arrays: `unzip ∘ map(λx. tuple(f(x), g(x)))` is the pair of
    `map(f)` and `map(g)`, computed by one map.
    """

    paper = "unzip"
    is_view = True


@dataclass(frozen=True, eq=False)
class Get(Pattern):
    """`get-i`: the `i`-th component of a tuple. `Get(t, i)` applies it to the tuple value `t`."""

    i: int
    paper = "get"
    size_field = "i"
    is_view = True

    def __new__(cls, *args, **kwargs):
        if len(args) == 2:
            return cls(args[1])(args[0])
        return super().__new__(cls)


@dataclass(frozen=True, eq=False)
class Split(Pattern):
    """`split-n`: `T[m] -> T[n][m/n]`, chunks of `n` elements (Table 1); `n` must divide `m`."""

    n: ArithExpr
    paper = "split"
    size_field = "n"
    is_view = True

    def __post_init__(self):
        object.__setattr__(self, "n", as_size(self.n, "Split"))


@dataclass(frozen=True, eq=False)
class Join(Pattern):
    """`join`: `T[n][m] -> T[m*n]`, the inverse of split (Table 1)."""

    paper = "join"
    is_view = True


@dataclass(frozen=True, eq=False)
class Iterate(Pattern):
    """`iterate-n(f)`: `f` applied `n` times, `f^0 = id`, `f^(n+1) = f^n ∘ f` (Table 1).

    `f` may shrink the array by a constant factor per step (the reduction trees of Figure 9).
    """

    n: ArithExpr
    f: FunDecl
    paper = "iterate"
    size_field = "n"
    funs = ("f",)

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "n", as_size(self.n, "Iterate"))


@dataclass(frozen=True, eq=False)
class IterateHost(Pattern):
    """`iterate-host-n(f)`: `iterate-n(f)` whose step `f`, one kernel of type `T -> T`, the host launches `n`
    times, each launch reading the buffer the one before wrote and writing the other of two buffers (the
    ping-pong of the paper's `iterate`, 3.1, moved from a loop inside a kernel to the host: a step's work-items
    need every result of the step before, so the step cannot loop inside one kernel)."""

    n: ArithExpr
    f: FunDecl
    paper = "iterate-host"
    size_field = "n"
    funs = ("f",)
    level = OPENCL_LEVEL

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "n", as_size(self.n, "IterateHost"))


@dataclass(frozen=True, eq=False)
class Reorder(Pattern):
    """`reorder`: some permutation of the array, the implementation's choice (Table 1)."""

    paper = "reorder"
    level = HIGH


@dataclass(frozen=True, eq=False)
class Transpose(Pattern):
    """`transpose`: `T[n][m] -> T[m][n]`, swapping the two outer dimensions."""

    paper = "transpose"
    is_view = True


@dataclass(frozen=True, eq=False)
class Id(Pattern):
    """`id`: the identity; under a map into another memory it becomes a copy (Figure 9(a))."""

    paper = "id"


@dataclass(frozen=True, eq=False)
class Slide(Pattern):
    """`slide(size, step)`: `T[n] -> T[size][(n - size)/step + 1]`, overlapping windows for stencils."""

    size: int
    step: int
    paper = "slide"
    is_view = True


PAD_MODES = ("clamp", "wrap", "mirror")


@dataclass(frozen=True, eq=False)
class Pad(Pattern):
    """`pad(left, right, boundary)`: `T[n] -> T[left + n + right]` (Accelerator's Expand and Pad).

    `boundary` is `"clamp"` (repeat the edge), `"wrap"` (periodic), `"mirror"` (reflect), or a
    constant value.
    """

    left: int
    right: int
    boundary: Union[str, Expr] = "clamp"
    paper = "pad"
    is_view = True

    def __post_init__(self):
        if isinstance(self.boundary, str):
            if self.boundary not in PAD_MODES:
                raise LiftTypeError(f"Pad: boundary must be one of {PAD_MODES} or a value, got {self.boundary!r}")
        else:
            object.__setattr__(self, "boundary", to_expr(self.boundary))
        if self.left < 0 or self.right < 0:
            raise LiftTypeError(f"Pad: left and right must be non-negative, got {self.left}, {self.right}")


@dataclass(frozen=True, eq=False)
class PadToMultiple(Pattern):
    """`pad-to-multiple-n(value)`: `T[m] -> T[n * ceil(m/n)]`, the array followed by `(n - m mod n) mod n` copies of
    the constant `value`, or with `value` `"clamp"` of its last element (Brook's virtualised sizes: a length made
    a multiple of a chunk).

    A view like `pad`: reading element `i` reads the input's `[i]` where `i < m`, else `value` (or `[m - 1]`).
    `split-n` of it needs no divisibility of `m`, which is what lets chunked reductions and split maps apply at
    every size (`lift.rules.padding`).
    """

    n: ArithExpr
    value: Union[str, Expr]
    paper = "pad-to-multiple"
    size_field = "n"
    is_view = True

    def __post_init__(self):
        object.__setattr__(self, "n", as_size(self.n, "PadToMultiple"))
        if isinstance(self.value, str):
            if self.value != "clamp":
                raise LiftTypeError(f"PadToMultiple: the padding must be a constant or 'clamp', got {self.value!r}")
            return
        object.__setattr__(self, "value", to_expr(self.value))
        if not isinstance(self.value, Literal):
            raise LiftTypeError(f"PadToMultiple: the padding must be a constant or 'clamp', got {self.value!r}")


@dataclass(frozen=True, eq=False)
class Take(Pattern):
    """`take-n`: `T[m] -> T[n]`, the first `n` elements (`n <= m`), the inverse of `pad-to-multiple`.

    A view: reading element `i` reads the input's `[i]`. As the destination of a computation it drops the
    writes past `n`, which is how a map over a padded array writes only the results its output holds
    (`lift.rules.padding`).
    """

    n: ArithExpr
    paper = "take"
    size_field = "n"
    is_view = True

    def __post_init__(self):
        object.__setattr__(self, "n", as_size(self.n, "Take"))


@dataclass(frozen=True, eq=False)
class Drop(Pattern):
    """`drop-n`: `T[m] -> T[m - n]`, all but the first `n` elements (`n <= m`); `take-k ∘ drop-n` is numpy's
    slice `[n:n + k]` (Accelerator's Section, a view of lift arrays' `x[a:b]`).

    A view: reading element `i` reads the input's `[i + n]`.
    """

    n: ArithExpr
    paper = "drop"
    size_field = "n"
    is_view = True

    def __post_init__(self):
        object.__setattr__(self, "n", as_size(self.n, "Drop"))


def is_view(f: FunDecl) -> bool:
    """Whether `f` is a data-layout pattern (`Pattern.is_view`), or a `map` of a data-layout function.

    A map of a view computes nothing either (Lift's stencils, Hagedorn et al., CGO 2018: `map(pad)`,
    `map(slide)`, `map(transpose)` are views in N dimensions); `map(id)` is a copy, not a view.
    """
    if isinstance(f, Map):
        return _is_view_function(f.f)
    return isinstance(f, Pattern) and f.is_view


def _is_view_function(f: FunDecl) -> bool:
    if isinstance(f, Lambda):  # `λ v. v` is the identity: its map is a copy, as map(id)
        return isinstance(f.body, FunCall) and _composes_views(f.body, {p.name for p in f.params})
    return is_view(f)


def _composes_views(e: Expr, params: set) -> bool:
    if isinstance(e, Param):
        return e.name in params
    return isinstance(e, FunCall) and _is_view_function(e.f) and all(_composes_views(a, params) for a in e.args)


def is_high_level(f: FunDecl) -> bool:
    """Whether `f` is a pattern the code generator does not know, which rules must lower first (a map of a
    view is a view: it needs no lowering)."""
    return isinstance(f, Pattern) and f.level == HIGH and not is_view(f)
