"""The sequential maps whose iterations the emitter writes out specially (`lift.opencl_gen.emit`).

`map-seq-unswitch` emits each iteration twice: once reading its clamped vectors directly, under one test that
they are all in bounds, and once as it is, checking each read (`unswitched`); the `map-seq-unroll`s inside such
an iteration become their steps (`unrolled_steps`), so that the bounds checks depend on the enclosing loops alone,
but in the copy that checks its reads of a `rolled` one, where they and the unrolled folds are loops.
`map-seq-slide` keeps its window in private variables at constant indices, loading only the elements that enter
it each iteration (register rotation: Stoltzfus, Hagedorn et al.).
"""

from __future__ import annotations

from typing import Optional

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.opencl_gen import accesses as A
from lift.opencl_gen import c_ast as C
from lift.opencl_gen import views as V
from lift.opencl_gen.allocation import allocation
from lift.opencl_gen.memory import PRIVATE
from lift.opencl_gen.space_inference import no_space
from lift.types.arith import ArithExpr, Cst
from lift.types.types import ArrayType, Type


class SequentialMapEmission:
    """The `Emitter`'s methods for `map-seq-unswitch` and `map-seq-slide` (`lift.opencl_gen.emit`)."""

    def unrolled_steps(self, dim: int, n: ArithExpr, body, label: str, fresh: Optional[str]) -> None:
        """A `map-seq-unroll` inside an iteration of a `map-seq-unswitch` (a window's private copy), its steps one
        after another, each with its index a constant, as `reduce-seq-unroll`'s: the bounds checks of the padded
        reads then depend on the enclosing loops alone, so that the iteration tests them once (`unswitched`)."""
        for k in range(n.value):
            self.scope.append(("seq", dim, Cst(k), n))
            try:
                stmts = self.nested(lambda k=k: body(Cst(k)))
            finally:
                self.scope.pop()
            self.add(C.Block(stmts, comment=f"{label}: step {k}", kind="seq", fresh=fresh))

    def call_MapSeqSlide(self, f: P.MapSeqSlide, args: list, t: Type, out, path: str) -> V.View:
        """`map-seq-slide(f, size, step)`: the window in `size` private variables. Before the loop its first
        `size - step` elements are loaded; each iteration loads the `step` that enter it, applies `f`, and shifts
        the window down by `step`. Every index into the window is a constant, so it stays in registers."""
        (a,) = args
        if out is None:
            raise no_space(path)
        window_t = ArrayType(a.type.elem, Cst(f.size))
        window = self.provide(None, allocation(window_t, PRIVATE, (), f"{path}.window"), window_t)
        kept = f.size - f.step
        for j in range(kept):
            self.window_copy(a.index(Cst(j)), window.index(Cst(j)), path)

        def body(i):
            for k in range(kept, f.size):
                self.window_copy(a.index(i * f.step + k), window.index(Cst(k)), path)
            self.call(f.f, [window], t.elem, out.index(i), f"{path}.f")
            for j in range(kept):
                self.window_copy(window.index(Cst(j + f.step)), window.index(Cst(j)), path)

        self.loop("seq", 0, t.length, body, f.paper)
        return out

    def window_copy(self, src: V.View, dst: V.View, path: str) -> None:
        """One element of a `map-seq-slide`'s window copied, an array element by element at constant indices (not in a
        loop, as the fold's `copy`: indexed by a counter, the window would live in memory)."""
        t = src.type
        if not isinstance(t, ArrayType):
            self.store(dst, self.read(src))
            return
        if not t.length.is_constant:
            raise LiftCodegenError(f"map-seq-slide at {path}: the elements of its windows must be scalars, vectors "
                                   f"or arrays of constant length to live in private variables, got {t}")
        for k in range(t.length.value):
            self.window_copy(src.index(Cst(k)), dst.index(Cst(k)), path)

    def unswitched(self, emit, rolled: bool) -> None:
        """One iteration of a `map-seq-unswitch`: where its vector reads of clamped arrays are all in bounds (one
        test of the bounds checks that read no variable declared within it, or one loop counter within it in
        affine indices, tested at its first and last value: `_hoisted`), the iteration reading them directly;
        elsewhere the iteration emitted again as it is, its unrolled maps and folds loops where `rolled`."""
        unswitching, self.unswitching = self.unswitching, True
        try:
            self.unswitched_iteration(emit, rolled)
        finally:
            self.unswitching = unswitching

    def unswitched_iteration(self, emit, rolled: bool) -> None:
        outer = self.guards, self.bound
        try:
            self.guards, self.bound = [], {}
            stmts = self.nested(emit)
            guards, bound = self.guards, self.bound
            tests = {g.condition: _hoisted(g, bound) for g in guards}
            tests = {c: t for c, t in tests.items() if t is not None}
            self.guards, self.bound, rolling, self.rolling = [], {}, self.rolling, self.rolling or rolled
            try:
                checked = self.nested(emit) if tests else ()
            finally:
                self.rolling = rolling
        finally:
            self.guards, self.bound = outer
        if outer[0] is not None:
            outer[0].extend(guards)
            outer[1].update(bound)
        if not tests:
            self.out.stmts.extend(stmts)
            return
        test = " && ".join(f"({t})" for t in dict.fromkeys(tests.values()))
        self.add(C.Block(C.assumed(stmts, list(tests)), guard=test, comment="the clamped vector reads in bounds"))
        self.add(C.Block(checked, guard=f"!({test})"))


def _hoisted(guard: A.GuardedAccess, bound: dict) -> Optional[str]:
    """The test, once per iteration of a `map-seq-unswitch`, that `guard`'s condition holds throughout it: the
    condition itself where it reads no variable declared in the iteration (`bound`), its ranges at the ends of
    the one loop it reads the counter of (`GuardedAccess.over_loop`), else None (checked at each read)."""
    within = guard.bounds & bound.keys()
    if not within:
        return guard.condition
    if len(within) > 1:
        return None
    (counter,) = within
    return None if bound[counter] is None else guard.over_loop(counter, bound[counter])
