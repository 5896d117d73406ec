"""The default lowering: a strategy of rules only that lowers any well-typed high-level program.

`lift.compile` applies it to a program that still has high-level patterns and is given no other lowering.
Every step is a rule (paper Figures 3, 4), so the lowered program means what the program means. What it
chooses, in order:

0. a program written as routine calls (`lift.ir.routine`: BLAS-like library calls) is their bodies
   (`inline-routine`, β-reduction; `lift explore` searches their fusion into kernels instead); a program whose
   result is a view of its inputs (`transpose ∘ map(transpose)`) copies it, `map^d(id)` (`copy-view`);
0a. an iteration outside every map (a stencil over time steps) runs its steps in kernels of their own, as a
   step's maps need every result of the step before: a step that is one kernel, a computation of views of its
   input keeping its type, is a host loop of that kernel, `iterate-host^n(f)` (`iterate-host`, any constant `n`
   from 1: one kernel launched `n` times over two buffers, `lift.opencl_gen.host_loops`), but for a map of the
   input itself (no stencil) of up to `MAX_UNROLLED_STEPS` steps, which fuse into one kernel unrolled; no step at
   all is a copy of the input (`iterate-zero`); any other step, of a constant `n` up to `MAX_UNROLLED_STEPS`, is
   unrolled, `f ∘ .. ∘ f` (`iterate-decomposition`, `iterate-once`, Figure 3(a)); each step's kernels are
   lowered as below; and a map
   of a user function of arrays (`map(avg3)(slide(3, 1)(a))`) names its element (`map-eta-expansion`), so that
   the window is copied to private memory (`private-argument`, step 5) as in `map(λw. avg3(w))`;
0b. a computation that a map outside every map does without reading its element (`map(λv. div(v, sum))`
   with `sum = reduce(+, 0)(x)`) is let-bound before the map (`hoist-invariant`, `lift.rules.let_floating`):
   computed once, in kernels of its own, into global memory, which the map's work-items read;
1. maps composed directly are fused first (`map(f) ∘ map(g) → map(f ∘ g)`, Figure 3(f)): no intermediate
   array, one kernel fewer;
1a. where the matrix product's register blocking (below) does not apply, a matrix whose columns (of
   `MIN_CHUNK` elements or more) the function of a map outside every map walks, once per element of the map
   (`Bᵀ` in `map(λa. map(λb. dot(a, b))(transpose(B)))(A)`, `Xᵀ X`), is transposed once into a let-bound copy
   whose rows it then walks (`transpose-copy`, `lift.rules.transposition`). A naive transposition costs about
   as much as one walk of the columns (16M floats on PoCL: 25-60 ms either way), so a map walking each column
   once (a transposed gemv) keeps its walk; but a column reduction `map(λcol. reduce(f, z)(..col..))(transpose(A))`
   over `MIN_CHUNK` rows or more folds blocks of columns, padded where they do not divide them, row by row into
   as many accumulators on one global work-item each (`lift.rules.block_choice`'s column blocks: mvt's `Aᵀy` at
   2003², 64 columns a block over 2048: 12.5 ms, one column per work-item 76 ms), on a device where vectors pay
   (a CPU's few cores; on an H200, 27 work-items took atax 4.27 ms, one per column 0.071 ms); a column
   reduction written in a user function's argument, off the spine of a map's function and reading one zipped
   component (mvt's `map(λ(x, col). x + dot(col, y))(zip(x, transpose(A)))`),
   is first mapped on its own where it is then blocked so (`map-subterm-fission`, `lift.rules.subterm_fission`:
   `zip(x, map(λcol. dot(col, y))(transpose(A)))`), the rest an elementwise map over its results;
1b. a stencil, a map outside every map over windows of step 1 (`slide(n, 1)`, in up to three dimensions: a map
   over windows under at most two maps; `lift.rules.stencil_lowering`) of reductions of constant size, folds each
   window unrolled (`reduce-seq-unroll`: the indices into a flattened window and the grid's boundary are constants at each
   step; a 1-D window of more than `MAX_UNROLLED_WINDOW` elements in a loop, whose reads are affine in its
   counter, so that the edges are still tested once per vector: a kernel of one step, not 31), or of a user
   function of its window (`jacobi5(join(nb))`, the stencil paper's form: vectorised as it is, its window's
   private copy unrolled, `lift.rules.column_sums.user_function_windows`), and computes
   `STENCIL_LANES` windows at once in the lanes of vectors (`vectorize-windows`, Figure
   4(e): unaligned vector loads of shifted rows of the grid, tested once per vector for its edges,
   `map-seq-unswitch`; the vectors at the edges, which check each read, fold a large 2-D window on long rows in
   a loop, `map-seq-unswitch(f, rolled)`, `MAX_UNROLLED_CHECKS`), in blocks of up to `STENCIL_BLOCK` windows
   per work-item (`lift.rules.column_sums.vector_windows`), the windows padded to a multiple of the block where
   it does not divide them (`pad-map`); the blocks on global work-items of dimension 0, the outer maps on
   dimensions 1 and 2; a map of the fold's result after it (a 1-D window's mean,
   `map(λw. map(λs. s / n)(reduce(+, 0)(w)))`) is first a map of its own (`map-fission`) on global work-items
   over the stencil's results (4M floats, a 31-point mean: 391 ms before, one work-item per window in
   work-groups of one at a prime size);
1c. on a device where vectors pay, a map outside every map whose user functions take vectors apart and whose
   function folds over `MIN_CHUNK` elements or more (N-body's bodies, each folding over all bodies) computes 8
   elements per global work-item, one per lane of the vectors of their components
   (`lift.rules.struct_of_vectors`: 86 ms at 8192 bodies on PoCL, 837 ms a body per work-item);
2. a reduction outside every map runs in two kernels (Figure 8's chunks): `reduce ∘ map(g)` →
   `reduce-seq ∘ join ∘ map-global(reduce-seq(f ∘ g)) ∘ split-c`, each work-item reducing one chunk
   of `c` elements, chosen from the size (`lift.rules.reduction_choice`); a reduction of no map reduces `map(id)` of its
   input (`reduce-map-id`); where the mapped elements are scalars, `g`
   and `f` have vector versions and a chunk holds at least 4 float4s, the chunks are of float4 lanes
   (`vectorize-map`, `reduce-lanes`, Figure 9(c)), and a third, one-work-item kernel adds the 4 lanes:
   `reduce-seq ∘ asScalar ∘ reduce-seq(vect-4(f)) ∘ join ∘ map-global(reduce-seq(vect-4(f ∘ g)))
   ∘ split-c/4 ∘ asVector-4`. Where `c` does not divide the size, the input is padded with the reduction's
   neutral element first (`pad-reduction`, `lift.rules.padding`), or, where the map does not send the
   padding to it, with copies of its last element for `max` and `min` (`pad-reduction-repeat`), or a smaller
   chunk that divides is taken, or else the map's results are padded with the neutral element, computed into
   memory by a kernel of their own (`pad-reduction-result`: a Monte-Carlo count at a prime size, 16,777,213
   hashed indices, whose final sum ran on one work-item); where the size is unknown, or the operator is not
   known to be associative (the reduction then means `reduce-seq`, `lift.ir.associativity`), one work-item
   reduces everything. A reduction from a `z` that is not neutral (`f(z, z) ≠ z`: `+` from 5, whose chunks
   would each add 5) reduces `z` with the reduction from the operator's neutral element `e`, `reduce(f, z) ∘
   reduce(f, e)` (`reduce-neutral-init`), whose chunks are these; the two final sequential folds are then one
   (`reduce-seq-neutral-init`); with no neutral element known, one work-item reduces everything;
3. a reduction of a flattened array (`join(x)`, also through a map or a map of a zip) inside a map, or outside
   every map where the rows are `MIN_CHUNK` elements or more, is folded row by row (`fold_joins`: `reduce-join`,
   `map-join`, `zip-join`): a stencil's window is not gathered into float4s across its rows, a sum of a sliced
   matrix divides no index by the row length; then a reduction inside a map reduces float4 lanes
   (`vectorize-map`, `reduce-lanes`; a reduction of no map of 16 elements or more reduces `map(id)` of its
   input, `reduce-map-id`), of `ROW_LANES` = 8 lanes where 8 divides the length and it holds 4 float8s at
   least, else of 4: gemv's rows are dot products of float8s, a row sum a sum of float8s; where 4 does
   not divide a length of 16 or more, the input is padded to a multiple of 4 first (`pad-reduction`,
   `pad-reduction-repeat`), or, where no padding value is known, its first `k·⌊n/k⌋` elements reduce lanes and
   the fewer than `k` left fold from their result (`reduce-tail`, `lift.rules.reduction_tail`; `k` the lanes);
   first, a map of a user function of a one-element array it reads as `m[0]` (a row's maximum, cross-entropy's
   `exp(x - m[0])`) takes the element, bound by a map over the array of one, into which the reduction moves
   (`scalar-argument`, `reduce-join-map`), where 4 divides the length or it is 16 or more: a user function of
   scalars has vector versions (cross-entropy's row sums at 4001×1024 15x faster on PoCL);
3b. a map outside every map of such reductions of its rows (`reduces_rows`) folds its rows in blocks of
   `ROW_BLOCK` = 4 rows, padded with copies of the last row where 4 does not divide them
   (`lift.rules.block_choice`'s row blocks): each global work-item folds its block's rows at once into private
   accumulators (`lift.rules.row_blocking`: `h` independent chains of
   additions in flight, the other zipped arrays, gemv's `x`, read once per block), on a device where vectors
   pay (a CPU's few wide cores; a GPU, of native vector width 1, needs the rows' parallelism: gemv 4096² on an
   H200 took 0.58 ms with a row per work-item, 2.19 ms with blocks of 4); a fold of rows in a user function's
   argument (`relu(dot(row, x) + b)` over `zip(A, b)`) is first mapped on its own where its map is then blocked
   so (`map-subterm-fission`, as in step 1a; after step 1's fusion, which would fuse it back);
4. a map outside every map runs on global work-items, a map of maps on two dimensions
   (`map-global[1](map-global[0](f))`) where its function is a map over more than one element (under views:
   `join ∘ map(f) ∘ transpose`, a 2-D stencil's rows), a map of maps of maps over `MIN_CHUNK` elements or more
   each (a 3-D grid) on three; a
   one-dimensional map of scalars whose function has a vector version maps float4s
   (`asScalar ∘ map-global(vect-4(f)) ∘ asVector-4`), and a map over a length that `GROUP` work-items (of 4
   lanes each where vectorised) do not divide computes over its input padded to a multiple of that
   (`pad-map`, the extra results dropped): a prime global size would leave the driver work-groups of one;
   but not a map of reductions over rows of 16 elements or more (`reduces_rows`), whose work-items each
   reduce a row and whose padding would bound-check every element of it;
4b. on a device where vectors pay, a map of scalars inside such a map whose results are the row's result, through
   lets alone (softmax's `map(λx. x / s[0])(e)` after the row's reductions, layer normalisation's
   `scale(centre(x))`), of 16 elements or more, maps vectors of `ROW_LANES` lanes where it holds 4 of them, else
   of 4, its one-element arguments first taken as scalars (`scalar-argument`), and, where the lanes do not divide
   the row, its first `k·⌊n/k⌋` elements in vectors and the fewer than `k` left in scalars, each part written into
   its slice of the row (`map-tail`, `concat`; `lift.rules.row_map_lanes`): vector loads and stores, no index
   tested; a map whose results the row reads again is left to fuse with what reads it;
5. everything left is sequential (`map-seq`, `reduce-seq`, reorders keeping the order), then the fusion
   and identity rules apply wherever they do (`reduce-seq ∘ map-seq` fused, `join ∘ split` removed);
6. a user function with loops of constant trip count is replaced by the same function with those loops unrolled
   where their copies come to at most `MAX_UNROLLED_STATEMENTS` statements (`userfun-loop-unroll`,
   `lift.rules.userfun_unrolling`): a window it reads by the loops' counters (copied to private memory, step 5)
   is then read at constant indices, registers rather than memory, and the loops' control is gone; a small,
   constant trip count is a stencil's window (3x3, 5x5), whose loop costs more than its body; a long loop
   (Mandelbrot's 64 steps) stays a loop; before that, a fold's step adding a user function's product
   (`add(acc, mult(x, w))`) applies their composition, one expression (`userfun-composition`,
   `lift.rules.userfun_composition`), which the OpenCL compiler contracts into a multiply-add;
7. a user function computing the sine and cosine of one angle computes both by one call of `sincos`
   (`userfun-sincos`, `lift.rules.userfun_sincos`): a naive DFT's twiddle factors took half the time on PoCL.

A matrix product, a map over the columns of a matrix inside a map over rows (`map(λa. map(λb. reduce ∘
map ∘ zip(a, b))(transpose(B)))(A)`), is register-blocked before step 1a where its sizes are bound, each product
outside every map (or map of them) innermost first, steps 1a to 5 lowering the rest: each work-item computes
`BLOCK` = 4 × 16 results in private accumulators on two dimensions of global work-items
(`lift.rules.block_choice`'s register blocks: `lift.rules.macro_rules.register_blocked`, `blocked_products`,
the macro rules of CASES 2016); a naive one reads a row and a column per result. A user function of the
product's results (2mm's `α · dot(a, b)` and `dot(t, c) + β d` over `zip(transpose(C), d)`, a covariance's
`dot(ci, cj) / (n - 1)`) is split off first, an elementwise map over the plain product
(`lift.rules.fold_splitting.product_split_off`), where the product is then blocked. Where the blocks do not divide
the rows or the columns, these are padded to a multiple of them, the padded results dropped (`padded_rows`,
`padded_columns`), where that adds at most an eighth (`MAX_PADDING`); else a `SMALL_BLOCK` of 1 × 8 results in
float4 updates, where it divides them (many small products).

Vectorising is the cost model's criterion (`lift.explore.cost_model`: a `vect-n` application costs
`ceil(n / w)` operations on a device of native vector width `w`) put as a rule-level one: `vector_width`, the
device's native width for floats (`lift.compile` passes it; 4 where no device is known), of 2 or more vectorises
by 4, and of 1 (4 scalar operations either way) not at all. Everything else is chosen from the sizes alone.
"""

from __future__ import annotations

from typing import Mapping, Optional

from lift.errors import LiftError
from lift.ir import patterns as P
from lift.ir.nodes import FunCall, FunDecl, Lambda
from lift.ir.opencl_patterns import ToPrivate, Vectorize
from lift.ir.printer import paper
from lift.ir.typecheck import infer
from lift.ir.userfun import UserFun
from lift.rules import location as L
from lift.rules.derivation import Derivation
from lift.rules.engine import RewriteEngine
from lift.rules.fold_splitting import folds_split_off
from lift.rules.fusion import of_arrays
from lift.rules.iterate import host_step
from lift.rules.let_floating import invariant_computation, repeated_computation
from lift.rules.memory import is_copy
from lift.rules.paper_derivations import mapped
from lift.rules.reduction_choice import (LANES, MIN_CHUNK, inner_lanes, reduces_rows, to_vectors, top_reduction,
                                          vectorises)
from lift.rules.registry import RULES
from lift.rules.row_map_lanes import row_map_lanes, row_results
from lift.rules.sizes import bound_length
from lift.rules.strategy import (Focus, Selector, Strategy, argument, at_first, body, first_of, function, identity,
                                 inside, is_call, is_fun, mapped_body, normalize, repeat, rewrite, try_, where)
from lift.rules.stencil_lowering import MAX_UNROLLED_WINDOW, slid, stencil, under_views
from lift.rules.transposition import walked_transposition
from lift.rules.userfun_composition import multiply_add
from lift.types.arith import Cst
from lift.types.types import ArrayType, ScalarType

CLEANUP = ("reduce-seq-map-seq-fusion", "map-fusion", "split-join-id", "join-split-id", "asScalar-asVector-id",
           "asVector-asScalar-id", "remove-id", "map-asScalar", "map-asVector", "reduce-seq-neutral-init")

clean_up = normalize(first_of(r for r in RULES if r.name in CLEANUP))
"""The fusion and identity rules wherever they apply, outermost first, until none does."""

high_level = Selector(lambda ctx: L.is_location(ctx) and P.is_high_level(_head(ctx.node)), "high_level")
"""A call of, or a function passed to a pattern that is, a high-level pattern (one the code generator does not
know)."""

_LOWER_ONE = ((where(is_fun(P.Map) & inside()) >> rewrite("map-to-seq"))
              | (where(is_fun(P.Map) & ~inside()) >> rewrite("map-to-global", dim=0))
              | (where(is_fun(P.Reduce)) >> rewrite("reduce-to-seq"))
              | (where(is_fun(P.PartRed)) >> rewrite("part-red-to-reduce"))
              | (where(is_fun(P.Reorder)) >> rewrite("reorder-to-id")))
_PRIVATE_COPY = Selector(lambda ctx: isinstance(ctx.node, P.MapSeq) and not isinstance(ctx.node, P.MapSeqUnroll)
                         and is_copy(ctx.node) and isinstance(ctx.parent.node, (ToPrivate, P.MapSeqUnroll)),
                         "private_copy")
"""The loops of a copy into private memory (`toPrivate(map-seq(..(id)))`) not yet unrolled."""

lower_rest = (repeat(at_first(high_level, _LOWER_ONE), limit=200)
              >> normalize(where(is_call((UserFun, Vectorize))) >> rewrite("private-argument"))
              >> normalize(where(_PRIVATE_COPY) >> rewrite("map-seq-unroll")))
"""Every high-level pattern left, outermost first, lowered: a map outside every map, reduction and iterate on
global work-items, any other map and every reduction sequential, a reorder keeping the order. Stops at the
first one it cannot lower so (`lower` then names it). Then the array arguments of user functions that are
rows or windows are copied to private memory (`private-argument`), by unrolled loops (`map-seq-unroll`: the
copy's indices are constants, so the array is registers and only the elements the function reads are
loaded)."""

composed_userfuns = normalize(where(is_call((UserFun, Vectorize)) & inside(P.Fold)
                                    & Selector(multiply_add, "multiply_add")) >> rewrite("userfun-composition"))
"""Every fold's step of a user function adding another's product composed with it (step 6): `add(acc, mult(x, w))`
one expression, contracted into a multiply-add; compositions that contract nothing are left as they are."""

unrolled_userfuns = normalize(where(is_call((UserFun, Vectorize))) >> rewrite("userfun-loop-unroll"))
"""Every call of a user function whose loops of constant trip count fit `MAX_UNROLLED_STATEMENTS` unrolled
(step 6)."""

fused_sincos = normalize(where(is_call((UserFun, Vectorize))) >> rewrite("userfun-sincos"))
"""Every call of a user function computing the sine and cosine of one angle computing them by one call (step 7)."""

MAX_UNROLLED_STEPS = 64
"""The most steps of an iteration outside every map that the default lowering unrolls (step 0a)."""

GROUP = 64
"""The work-group size a map's global size is made a multiple of (by padding) where it is not one."""
ROW_LANES, ROW_BLOCK = 8, 4
"""The lanes of a reduction inside a map, and the rows of a map of such reductions each work-item folds at once
(`lift.rules.row_blocking`): float8s, 4 rows, the fastest of gemv 4096²'s on PoCL (issue 18)."""


class LoweringError(LiftError):
    """A program the default lowering cannot lower: names the pattern and its place."""


def _head(node) -> Optional[FunDecl]:
    return node.f if isinstance(node, FunCall) else node if isinstance(node, FunDecl) else None


def _over_many(ctx) -> bool:
    """A map call over an array that is not known to hold a single element."""
    length = getattr(ctx.node.args[0].t, "length", None)
    return length is not None and str(length) != "1"


_TO_VECTORS = to_vectors(LANES)


def _top_map(sizes: Mapping[str, int], vector_width: int) -> Strategy:
    """At a one-dimensional map outside every map: float4s on global work-items where they pay, the input
    padded where `GROUP` work-items do not divide the global size (module docstring, step 4)."""
    def on_global(lanes: int) -> Strategy:
        return (_TO_VECTORS >> argument(0, rewrite("map-to-global", dim=0))) if lanes > 1 \
            else rewrite("map-to-global", dim=0)

    def run(focus: Focus):
        length = bound_length(focus.ctx.node.args[0].t, sizes)
        if length is None:
            return None
        for lanes in ((LANES, 1) if vectorises(vector_width) else (1,)):
            k = lanes * GROUP
            moved = on_global(lanes) if length % k == 0 else rewrite("pad-map", k=k) >> argument(0, on_global(lanes))
            result = moved(focus)
            if result is not None:
                return result
        return None

    return Strategy(run, "top_map")


def _long(ctx) -> bool:
    """A map call over an array of `MIN_CHUNK` elements at least, or of a length not known."""
    length = getattr(ctx.node.args[0].t, "length", None)
    return length is not None and (not length.is_constant or length.value >= MIN_CHUNK)


def _global_maps(dims: tuple, over: Selector, point_free: bool) -> Strategy:
    """At a map: `map-to-global` on `dims[0]`, then on each of the following dimensions the map its function
    applies, called `over` an array (under views), or, if `point_free`, itself a map (`map(map(f))`)."""
    to_global = rewrite("map-to-global", dim=dims[0])
    if len(dims) == 1:
        return to_global
    inner = _global_maps(dims[1:], over, point_free)
    called = under_views(where(is_call(P.Map) & over) >> inner)
    nested = mapped_body(called) | function(body(called))
    if point_free:
        nested = nested | mapped(where(is_fun(P.Map)) >> inner) | function(where(is_fun(P.Map)) >> inner)
    return to_global >> nested


_MAP_OF_MAPS = (_global_maps((2, 1, 0), Selector(_long, "long"), point_free=False)
                | _global_maps((1, 0), Selector(_over_many, "over_many"), point_free=True))
"""A map of maps on two dimensions of global work-items, a map of maps of maps each called over `MIN_CHUNK`
elements or more (a 3-D grid, not a matrix of small vectors) on three: the innermost on dimension 0, along
which the driver vectorises work-items, so that a work-item's neighbours along it read the next elements."""


HOISTED_PRIVATE_LIMIT = 4096
"""The most scalars of a value that `hoist-invariant` binds once per element of an enclosing map (a row's
softmax weights in attention, `S` floats), in a work-item's private memory."""


def _scalars(t, sizes: Mapping[str, int]) -> Optional[int]:
    """The number of scalars of `t`, an array (of arrays) of scalars, under the size binding; else None."""
    count = 1
    while isinstance(t, ArrayType):
        n = bound_length(t, sizes)
        if n is None:
            return None
        count, t = count * n, t.elem
    return count if isinstance(t, ScalarType) else None


def _binds_a_private_value(sizes: Mapping[str, int], found) -> Selector:
    """A map whose function computes `found(f)` (an invariant or a repeated computation), an array of at most
    `HOISTED_PRIVATE_LIMIT` scalars under the size binding (a reduction's result, a row of weights): bound in a
    work-item, it lives in private memory."""
    def test(ctx) -> bool:
        f = ctx.node.f.f
        e = found(f) if isinstance(f, Lambda) else None
        n = None if e is None else _scalars(e.t, sizes)
        return n is not None and n <= HOISTED_PRIVATE_LIMIT

    return Selector(test, f"private_{found.__name__}")


def hoist_invariants(sizes: Optional[Mapping[str, int]] = None) -> Strategy:
    """Every computation that a map outside every map does without its element, let-bound before the map
    (`lift.rules.let_floating`): computed once, in kernels of its own; then, inside maps, every such array of
    at most `HOISTED_PRIVATE_LIMIT` scalars under `sizes` (a row's maximum or sum in a map over rows:
    `map(λrow. map(λv. v / sum(row))(row))`; a query row's softmax weights in attention's map over the columns
    of `V`), computed once per element of the enclosing map instead of once per element of the inner one; every
    such array a mapped function computes twice (attention's scores of a query row, read by its maximum and its
    exponentials), computed once per element (`share-computation`); the lets moved out of the calls taking them
    (`let-out-of-argument`), so that maps they separated fuse."""
    sizes = dict(sizes or {})
    return (normalize(where(is_call(P.Map) & ~inside()) >> rewrite("hoist-invariant"))
            >> normalize(where(is_call(P.Map) & inside() & _binds_a_private_value(sizes, invariant_computation))
                         >> rewrite("hoist-invariant"))
            >> normalize(where(is_call(P.Map) & _binds_a_private_value(sizes, repeated_computation))
                         >> rewrite("share-computation"))
            >> normalize(where(inside()) >> rewrite("let-out-of-argument")))


_FUSE_MAPS = normalize(where(is_call(P.Map) & Selector(lambda c: isinstance(c.node.args[0], FunCall)
                                                       and isinstance(c.node.args[0].f, P.Map), "of_map"))
                       >> rewrite("map-fusion"))


_PARTIAL_REDUCTIONS = Selector(lambda ctx: isinstance(ctx.node.f.f, P.Reduce) and isinstance(ctx.node.args[0], FunCall)
                               and isinstance(ctx.node.args[0].f, P.Join), "reductions_of_join")
"""A map of a reduction over a joined array: `map(reduce(f, z))(join(x))`, which `reduce-join` leaves in 3-D."""


def _long_rows(ctx) -> bool:
    """A reduction of a joined array (read directly, through a map, or through a map of a zip) whose rows have
    `MIN_CHUNK` elements or more, or a length not known."""
    e = ctx.node.args[0]
    for _ in range(3):
        if isinstance(e, FunCall) and isinstance(e.f, P.Join):
            length = e.args[0].t.elem.length
            return not length.is_constant or length.value >= MIN_CHUNK
        if not (isinstance(e, FunCall) and e.args):
            return False
        e = e.args[0]
    return False


_FOLD_ROWS = (rewrite("reduce-join")
              | argument(0, try_(argument(0, rewrite("zip-join"))) >> rewrite("map-join")) >> rewrite("reduce-join"))

fold_joins = normalize((where(is_call(P.Reduce) & (inside() | Selector(_long_rows, "long_rows"))) >> _FOLD_ROWS)
                       | (where(is_call(P.Map) & inside() & _PARTIAL_REDUCTIONS) >> rewrite("map-join")))
"""Every reduction of a flattened array folded row by row, then over the rows' results
(`lift.rules.join_folding`), inside a map (a stencil's window `join(nb)`, weighted through `map(*) ∘
zip(join(nb), join(k))`), and outside every map where the rows are long (the sum of a sliced matrix, `join ∘
map(drop-1) ∘ take-(n)`): no index is divided by the length of a row, no float4 gathers the elements of several
rows, and a map over long rows runs on global work-items, each reducing its row."""


def _transposes_copied(sizes: Mapping[str, int]) -> Strategy:
    """Every matrix whose columns, of `MIN_CHUNK` elements at least (or of a length not known), the function of a
    map outside every map walks (`walked_transposition(.., repeatedly=True)`), transposed once into a copy of its
    own whose rows it walks (`transpose-copy`, module docstring, step 1a)."""
    def walks_long_columns(ctx) -> bool:
        t = walked_transposition(ctx.node, repeatedly=True)
        length = bound_length(t.t.elem, sizes) if t is not None else None
        return t is not None and (length is None or length >= MIN_CHUNK)

    return normalize(where(is_call(P.Map) & ~inside() & high_level & Selector(walks_long_columns, "walks_columns"))
                     >> rewrite("transpose-copy"))


_INLINE_ROUTINES = normalize(rewrite("inline-routine"))
"""Step 0: a program written as routine calls (`lift.ir.routine`) is their bodies (`lift.rules.routine_inlining`)."""


copied_view = try_(body(rewrite("copy-view")))
"""A program whose result is a view of its inputs copying it (module docstring, step 0; `copy-view`)."""


def _unrollable(it: P.Iterate) -> bool:
    """Whether the default lowering unrolls `iterate^n(f)` outside every map: `n` a constant from 1 to
    `MAX_UNROLLED_STEPS`."""
    return it.n.is_constant and 1 <= it.n.value <= MAX_UNROLLED_STEPS


def _unroll_step(focus: Focus):
    """At `iterate^n(f)(x)` (`_unrollable`): `iterate^(n-1)(f)(f(x))`, or `f(x)`."""
    n = focus.ctx.node.f.n
    if not _unrollable(focus.ctx.node.f):
        return None
    if n.value == 1:
        return rewrite("iterate-once")(focus)
    return (rewrite("iterate-decomposition", m=n.value - 1) >> argument(0, rewrite("iterate-once")))(focus)


_ITERATE_HOST = next(r for r in RULES if r.name == "iterate-host")


def _hostable(ctx) -> bool:
    """Whether `iterate-host` applies at the iteration `ctx`, of a step written as a function `λx. ...` (whose
    maps the steps below lower as calls), unless it is a map of `x` itself (no stencil's `slide ∘ pad`) of
    few steps: those are unrolled, and `map-fusion` makes them one kernel of no intermediate array."""
    step = ctx.node.f.f
    if not isinstance(step, Lambda) or next(_ITERATE_HOST.matches(ctx.node, ctx), None) is None:
        return False
    c = host_step(ctx.node)
    return not (isinstance(c.f, P.Map) and all(a == step.params[0] for a in c.args) and _unrollable(ctx.node.f))


hosted_iterations = normalize(where(is_call(P.Iterate) & ~inside())
                              >> (rewrite("iterate-zero") | (where(Selector(_hostable, "hostable"))
                                                             >> rewrite("iterate-host"))))
"""Every iteration outside every map of no step a copy, whose step is one kernel a host loop of it (module
docstring, step 0a)."""

unrolled_iterations = normalize(where(is_call(P.Iterate) & ~inside()) >> Strategy(_unroll_step, "unroll_step"))
"""Every other iteration outside every map unrolled into its steps (module docstring, step 0a)."""


def scalar_arguments(sizes: Mapping[str, int], tails: bool = True) -> Strategy:
    """Every reduction inside a map whose vector lanes step 3 reduces (a length that `LANES` divides, or of `LANES`
    float4s at least), of a map of a user function of a one-element array (a row's maximum) taking its element
    instead, the reduction moved inside the map over that element (module docstring, step 3;
    `lift.rules.scalar_argument`). No padding would do (`exp(x - s)` is the neutral 0 for no finite `x`): where
    `LANES` does not divide the length, step 3 splits a tail off (`reduce-tail`), if `tails`."""
    def has_lanes(ctx) -> bool:
        length = bound_length(ctx.node.args[0].t, sizes)
        return length is not None and (length % LANES == 0 or tails and length >= LANES * LANES)

    return normalize(where(is_call(P.Reduce) & inside() & Selector(has_lanes, "has_lanes"))
                     >> argument(0, rewrite("scalar-argument")) >> rewrite("reduce-join-map"))


named_elements = normalize(where(is_fun(P.Map) & Selector(lambda ctx: of_arrays(_head(ctx.node).f), "of_arrays"))
                            >> rewrite("map-eta-expansion"))
"""Every map of a user function of arrays applying it to a named element (module docstring, step 0a)."""


def default_strategy(sizes: Mapping[str, int], vector_width: int = LANES, row_lanes: int = ROW_LANES,
                     row_block: int = ROW_BLOCK, unrolled_window: int = MAX_UNROLLED_WINDOW,
                     checked_copies: Optional[str] = None, row_tails: bool = True, row_maps: bool = True) -> Strategy:
    """The default lowering as a strategy, under the size binding `sizes` (it picks the chunks and paddings),
    for a device of native vector width `vector_width` (module docstring); a reduction inside a map of
    `row_lanes` lanes where they divide it, a map of such reductions over rows in blocks of `row_block`
    rows (1: none), a stencil's 1-D windows of up to `unrolled_window` elements folded unrolled, and its windows
    folded at the grid's edges unrolled or rolled as `checked_copies` says ("unrolled", "rolled"; None:
    `MAX_UNROLLED_CHECKS`); with `row_tails`, a reduction inside a map that no padding keeps reduces the lanes of
    a head and folds the tail after them (`reduce-tail`; without, it stays scalar where the lanes do not divide
    it); with `row_maps`, an elementwise map giving a row's result maps vector lanes, a head and a scalar tail where
    they do not divide it (`lift.rules.row_map_lanes`; without, it stays scalar). The blocks are
    `lift.rules.block_choice`'s, which builds on this module, hence imported here."""
    from lift.rules.block_choice import (blocks_columns, blocks_rows, fold_column_blocks, fold_row_blocks,
                                         register_blocks)
    from lift.rules.struct_of_vectors import all_pairs_of_structs

    top_reductions = normalize(where(is_call(P.Reduce) & ~inside()) >> top_reduction(sizes, vector_width))
    inner_reductions = (normalize(where(is_call(P.Reduce) & inside()) >> inner_lanes(sizes, row_lanes, row_tails))
                        if vectorises(vector_width) else identity)
    column_blocks = fold_column_blocks(sizes) if vectorises(vector_width) else identity
    row_blocks = fold_row_blocks(sizes, row_block) if vectorises(vector_width) else identity
    to_global = rewrite("map-to-global", dim=0)
    top_map = _MAP_OF_MAPS | (where(reduces_rows(sizes)) >> to_global) | _top_map(sizes, vector_width) | to_global
    top_maps = normalize(where(is_call(P.Map) & ~inside() & high_level) >> top_map)
    stencils = (normalize(where(is_call(P.Map) & ~inside() & high_level & Selector(slid, "slid"))
                          >> stencil(sizes, _top_map(sizes, 1), unrolled_window, checked_copies))
                if vectorises(vector_width) else identity)
    split_columns, split_rows = ((folds_split_off(blocks_columns(sizes)),
                                  folds_split_off(blocks_rows(sizes, row_block)))
                                 if vectorises(vector_width) else (identity, identity))
    structs = all_pairs_of_structs(sizes) if vectorises(vector_width) else identity
    scalars = scalar_arguments(sizes, row_tails) if vectorises(vector_width) else identity
    row_maps = (normalize(where(is_call(P.Map) & inside() & row_results) >> row_map_lanes(sizes, row_lanes))
                if vectorises(vector_width) and row_maps else identity)
    general = (stencils >> structs >> scalars >> fold_joins >> _FUSE_MAPS >> split_rows >> top_reductions
               >> inner_reductions >> row_blocks >> top_maps >> row_maps >> lower_rest >> clean_up)
    return (_INLINE_ROUTINES >> copied_view >> hosted_iterations >> unrolled_iterations >> named_elements
            >> hoist_invariants(sizes) >> _FUSE_MAPS >> split_columns
            >> register_blocks(sizes) >> _transposes_copied(sizes) >> column_blocks >> general
            >> composed_userfuns >> unrolled_userfuns >> fused_sincos)


def default_lowering(program: Lambda, sizes: Optional[Mapping[str, int]] = None, vector_width: int = LANES,
                     row_lanes: int = ROW_LANES, row_block: int = ROW_BLOCK,
                     unrolled_window: int = MAX_UNROLLED_WINDOW,
                     checked_copies: Optional[str] = None, row_tails: bool = True,
                     row_maps: bool = True) -> Derivation:
    """The derivation of the default lowering of `program` (see the module docstring) for a device of native
    vector width `vector_width` (`row_lanes`, `row_block`, `unrolled_window`, `checked_copies`, `row_tails`,
    `row_maps`: `default_strategy`); `LoweringError` naming the first pattern it leaves high-level, and where, if
    any."""
    sizes = dict(sizes or {})
    engine = RewriteEngine(sizes=sizes)
    long_iteration = next((c for c in L.subtree(L.root(infer(program).expr, engine.choices))
                           if is_call(P.Iterate)(c) and not inside()(c)
                           and not (_unrollable(c.node.f) or _hostable(c) or c.node.f.n == Cst(0))), None)
    if long_iteration is not None:
        it = long_iteration.node.f
        raise LoweringError(f"{paper(it)} at {long_iteration.path}: an iteration outside every map whose step is "
                            f"not one kernel (one computation of views of its input, keeping its type) is unrolled "
                            f"into kernels, one step after another, only for a constant count from 1 to "
                            f"{MAX_UNROLLED_STEPS} (here {it.n}); write fewer steps and call the program repeatedly")
    if checked_copies not in (None, "unrolled", "rolled"):
        raise LoweringError(f"checked_copies is 'unrolled', 'rolled' or None, got {checked_copies!r}")
    focus = default_strategy(sizes, vector_width, row_lanes, row_block, unrolled_window,
                             checked_copies, row_tails, row_maps)(Focus(program, engine))
    left = next((c for c in L.subtree(L.root(infer(focus.program).expr, engine.choices)) if high_level(c)), None)
    if left is not None:
        f = _head(left.node)
        raise LoweringError(f"{paper(f)} at {left.path} is a high-level pattern no rule lowers here (in "
                            f"{paper(left.node) if isinstance(left.node, FunCall) else paper(f)}); lower it by hand "
                            f"or with `lift explore`")
    return focus.derivation()


def lower(program: Lambda, sizes: Optional[Mapping[str, int]] = None, vector_width: int = LANES) -> Lambda:
    """`program` lowered by the default lowering (`default_lowering`)."""
    return default_lowering(program, sizes, vector_width).replay(program, RewriteEngine(sizes=dict(sizes or {})))
