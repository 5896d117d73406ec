"""The default lowering's stencils (`lift.rules.default_lowering`, step 1b): a map over windows of step 1 (`slide(n, 1)`
in any dimension) becomes blocks of vectors of windows on global work-items, each window's fold unrolled or a loop,
the vectors at the grid's edges checking their reads once (`map-seq-unswitch`), their folds unrolled or rolled.

The sizes are the module's constants, each with what it was measured at; `lift explore` measures the other choices.
"""

from __future__ import annotations

from typing import Mapping, Optional

from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.rules import location as L
from lift.rules.sizes import bound_length
from lift.rules.strategy import (Focus, Selector, Strategy, argument, is_call, mapped_body, rewrite, try_, where)
from lift.types.types import ArrayType, ScalarType


MAX_UNROLLED_WINDOW = 16
"""The most elements of a 1-D window whose fold the default lowering unrolls (`reduce-seq-unroll`); a longer one
is folded in a loop, so that a first kernel builds fast: conv1d's 31 taps at 1M floats on PoCL (issue 18), the
kernel 151 KB and a build of 49-135 s unrolled, 13.6 KB and 4.9 s rolled, which ran 0.75-0.93x as fast (best of
21-31, interleaved, loaded machine). `lift explore` measures the unrolled one too."""

MAX_UNROLLED_CHECKS, MIN_ROLLED_ROW = 16, 512
"""The vectors at a stencil's edges, which check each read, fold a 2-D window of more than `MAX_UNROLLED_CHECKS`
elements in a loop (`map-seq-unswitch(f, rolled)`) on rows of `MIN_ROLLED_ROW` windows or more, where at most 2
vectors in 32 take that copy: the kernel is a fraction of the size and builds faster, and runs as fast. Rolled, a
step recomputes the clamped indices of every lane, which the unrolled steps share; on shorter rows, and for a 3-D
window (three clamped indices a lane, each of a division or remainder), the loop costs more than its build saves.
On PoCL (Xeon, AVX-512; load 2-10; run times best of 21 interleaved rounds; `bench_unswitch_checks`), unrolled
against rolled: conv5x5 at 1001x999 121 KB against 21 KB, builds of 4.7 s against 1.0 s, and rolled runs 1.00x
as fast, at 499x2003 1.14x, at 5003x192 0.36x; box27 at 192^3 139 KB against 19 KB, 8.6 s against 3.9 s, 0.66x,
at 16x64x1024 0.81x; the 3-D 27-point Jacobi at 64x1024x1024 11.0 s against 6.2 s, 0.88x; heat3d at 61x59x53 (ten
kernels) 2.0 MB against 282 KB, 31 s against 10.5 s, 0.18x. `lift explore` measures the other form too."""

STENCIL_BLOCK, STENCIL_LANES = 64, 16
"""The windows each work-item of a stencil computes (at most), and the lanes of its vectors (at most): blocks of
64 windows of 16 lanes are among the fastest `lift explore` finds for jacobi2d on PoCL (issue 18)."""


def slid(ctx) -> bool:
    """A map call over windows of step 1 (`slide(n, 1)`, in any dimension), in its argument or, for a map of a
    stencil (a convolution's map over its filters, each mapping the windows of one grid), in its function: their
    windows, `n` at a time across them, are `n` consecutive grid values (one vector load, `vectorize-windows`)."""
    slides = [c.node for c in L.subtree(ctx) if isinstance(c.node, P.Slide)]
    return bool(slides) and all(s.step == 1 for s in slides)


def stencil(sizes: Mapping[str, int], top_map: Strategy, unrolled_window: int = MAX_UNROLLED_WINDOW,
            checked_copies: Optional[str] = None) -> Strategy:
    """At a map outside every map over windows of step 1 (`slid`), with up to 2 maps (under views) between it
    and a map over windows (`lift.rules.column_sums.windows`, or `user_function_windows`): each window's fold
    unrolled, or a loop where the window is a 1-D one of more than `unrolled_window` elements (`_rolled`), or its
    user function as it is; the windows in blocks of up to `STENCIL_BLOCK`, `STENCIL_LANES` windows to a vector
    (`lift.rules.column_sums.vector_windows`), the vectors at the grid's edges folding their windows in loops
    where `_rolled_checks` says so (`checked_copies`, "rolled" or "unrolled", overrides it) and the fold is not a
    loop already, padded
    to a multiple of the block where it does not divide their number; the blocks on global work-items of
    dimension 0 (as `top_map` places them where at the top), each outer map on the next dimension
    (module docstring, step 1b)."""
    from lift.rules.column_sums import (rolled_window_steps, user_function_windows, vector_windows, window_steps,
                                        windows)

    def blocks(levels: int) -> Strategy:
        def run(focus: Focus):
            length = bound_length(focus.ctx.node.args[0].t, sizes)
            if length is None or not (windows(focus.ctx) or user_function_windows(focus.ctx)):
                return None
            w = min(STENCIL_BLOCK, 1 << max(length - 1, 1).bit_length())
            on_global = rewrite("map-to-global", dim=0)
            lowered = top_map | on_global if levels == 0 else on_global
            windows_t = focus.ctx.node.args[0].t
            rolled = _rolled(windows_t, unrolled_window)
            checks = _rolled_checks(windows_t, length) if checked_copies is None else checked_copies == "rolled"
            return vector_windows(w, min(STENCIL_LANES, w), lowered, padded=length % w != 0,
                                  fold=rolled_window_steps if rolled else window_steps,
                                  rolled=checks and not rolled)(focus)

        return Strategy(run, "stencil_blocks")

    def nested(levels: int, depth: int = 0) -> Strategy:
        if depth == levels:
            return blocks(levels)
        inner = under_views(where(is_call(P.Map)) >> nested(levels, depth + 1))
        return try_(rewrite("map-eta-expansion")) >> mapped_body(inner) >> rewrite("map-to-global", dim=levels - depth)

    fissioned = (where(Selector(_maps_a_fold, "maps_a_fold")) >> rewrite("map-fission", at=1) >> argument(0, nested(0))
                 >> (top_map | rewrite("map-to-global", dim=0)))
    return nested(0) | fissioned | nested(1) | nested(2)


def _rolled(windows: ArrayType, unrolled_window: int) -> bool:
    """Whether a map over `windows` folds each in a loop: a 1-D window (of scalars, its reads affine in the
    fold's counter, so that the grid's edges are still tested once per vector of windows) of more than
    `unrolled_window` elements, or a window of a size variable's length (a convolution's channels: no loop of a
    length the kernel does not fix is unrolled)."""
    window = windows.elem
    return (isinstance(window, ArrayType) and isinstance(window.elem, ScalarType) and window.length.is_constant
            and window.length.value > unrolled_window) or not _constant_shape(window)


def _constant_shape(t) -> bool:
    """Whether every dimension of `t` has a constant length."""
    while isinstance(t, ArrayType):
        if not t.length.is_constant:
            return False
        t = t.elem
    return True


def _rolled_checks(windows: ArrayType, length: int) -> bool:
    """Whether the vectors of a row of `length` `windows` that check each read (at the grid's edges) fold them in
    loops: where a window of at most 2 dimensions holds more than `MAX_UNROLLED_CHECKS` scalars and the row at
    least `MIN_ROLLED_ROW` windows."""
    n, dims, t = 1, 0, windows.elem
    while isinstance(t, ArrayType):
        if not t.length.is_constant:
            return False
        n, dims, t = n * t.length.value, dims + 1, t.elem
    return n > MAX_UNROLLED_CHECKS and dims <= 2 and length >= MIN_ROLLED_ROW


def _maps_a_fold(ctx) -> bool:
    """A map whose function maps over the result of a fold of its element, `map(λw. map(g)(reduce(f, z)(..w..)))`
    (a window's mean: `map(λs. s / n)` of its sum)."""
    f = ctx.node.f.f
    return (isinstance(f, Lambda) and len(f.params) == 1 and isinstance(f.body, FunCall) and type(f.body.f) is P.Map
            and isinstance(f.body.args[0], FunCall) and isinstance(f.body.args[0].f, P.Reduce))


def under_views(s: Strategy) -> Strategy:
    """`s` at the focus, or at the first argument of a view called there (`join`, `transpose`, ...), recursively:
    the map in `join ∘ map(f) ∘ transpose`."""
    def run(focus):
        return (s | (where(Selector(lambda ctx: isinstance(ctx.node, FunCall) and P.is_view(ctx.node.f), "view"))
                     >> argument(0, under)))(focus)

    under = Strategy(run, lambda: f"under_views({s})")
    return under
