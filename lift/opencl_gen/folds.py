"""Folds (`reduce-seq`, `map-accum-seq`): a sequential loop threading an accumulator, and where it lives.

A scalar accumulator is a private variable. An array accumulator lives where the fold's result goes,
initialised there; each step writes its new accumulator over the old one where that is sound, else into
a fresh buffer copied back after the step (`fold_step`: the rule "in place or copied").
"""

from __future__ import annotations

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.opencl_gen import accesses as A
from lift.opencl_gen import c_ast as C
from lift.opencl_gen import views as V
from lift.opencl_gen.address_spaces import space_of
from lift.opencl_gen.emission import Emission
from lift.opencl_gen.in_place import misalignment
from lift.opencl_gen.memory import PRIVATE, Memory
from lift.opencl_gen.space_inference import no_space
from lift.rules.hierarchy import is_sequential_safe
from lift.ir.nodes import FunCall, Param, computes
from lift.types.arith import ArithExpr, Cst, Var
from lift.opencl_gen.c_types import c_type_name
from lift.types.types import ArrayType, TupleType, Type


class FoldEmission:
    """The `Emitter`'s methods for folds (`lift.opencl_gen.emit`)."""

    def call_ReduceSeq(self, f: P.ReduceSeq, args: list, t: Type, out, path: str) -> V.View:
        if not is_sequential_safe(f.f) and not (isinstance(f.init.t, ArrayType) and out is not None
                                                and isinstance(V.root(out), V.OwnedView)):
            raise LiftCodegenError(
                f"{f.paper} at {path} runs in all work-items of a work-group, with map-locals in its operator: its "
                f"accumulator of {f.init.t} must be an array private to each work-item, each holding the elements "
                "of its own map-local ids (toPrivate(reduce-seq(f, map-local(..)(z))), the initial value written by "
                "map-locals), not a value in " + ("no memory" if out is None else f"{space_of(out)} memory"))
        if isinstance(f.init.t, ArrayType):
            return self.reduce_arrays(f, args, t, out, path)
        (a,) = args
        acc_t = f.init.t
        acc_view = self.private_accumulator(f, path)
        acc = acc_view.mem

        def body(i):
            self.call(f.f, [acc_view, a.index(i)], acc_t, acc_view, f"{path}.f")

        self.fold_loop(a.type.length, body, f.paper, unroll=isinstance(f, P.ReduceSeqUnroll))
        result = V.MemView(acc, ArrayType(acc_t, Cst(1)))
        if out is None:
            return result
        self.store(out.index(Cst(0)), acc.name)
        return out

    def private_accumulator(self, f: P.Fold, path: str) -> V.MemView:
        """A fold's scalar accumulator: a private variable holding its initial value."""
        mem = Memory(self.fresh("acc"), PRIVATE, f.init.t, Cst(1), PRIVATE, scalar_variable=True)
        init = self.read(self.emit(f.init, None, f"{path}.init"))
        self.add(C.Decl(c_type_name(f.init.t), mem.name, init))
        return V.MemView(mem, f.init.t)

    def fold_loop(self, n: ArithExpr, body, label: str, unroll: bool = False) -> None:
        """The sequential loop of a fold; what it contains nests as inside a sequential pattern. Unrolled
        (`reduce-seq-unroll`), its steps one after another, each with its index a constant, so that the index
        arithmetic of the views it reads simplifies at each step (a flattened window's division and remainder
        vanish, a padded read's bounds depend on the enclosing loops alone); a loop in the copy of an iteration of a
        `map-seq-unswitch(f, rolled)` that checks its reads (`Emitter.rolling`)."""
        self.scope.append(("reduce", 0, None, None))
        try:
            if not unroll or self.rolling:
                self.loop("seq", 0, n, body, label)
                return
            for k in range(n.value):
                self.scope.append(("seq", 0, Cst(k), n))
                try:
                    stmts = self.nested(lambda: body(Cst(k)))
                finally:
                    self.scope.pop()
                self.add(C.Block(stmts, comment=f"{label}: step {k}", kind="seq"))
        finally:
            self.scope.pop()

    def reduce_arrays(self, f: P.ReduceSeq, args: list, t: Type, out, path: str) -> V.View:
        """`reduce-seq` with an array accumulator: it lives where the result goes, initialised there and
        updated by each step of `f` (`fold_step`). An initial value that is a parameter already in the
        result's place (a block of a work-group's accumulator, folded on in place by its work-item:
        `map-local(λ(acc, x). reduce-seq(f, acc)(x))`) is not copied; another view is copied in."""
        (a,) = args
        if out is None:
            raise no_space(path)
        acc = out.index(Cst(0))
        if isinstance(f.init, (Param, FunCall)) and not computes(f.init):
            init = self.emit(f.init, None, f"{path}.init")
            if not same_elements(init, acc):
                self.copy(init, acc)
        else:
            self.emit(f.init, acc, f"{path}.init")

        def body(i):
            self.fold_step(f, acc, a.index(i), f.init.t, lambda new: new, f"{path}.f")

        self.fold_loop(a.type.length, body, f.paper, unroll=isinstance(f, P.ReduceSeqUnroll))
        return out

    def fold_step(self, f: P.Fold, acc: V.View, x: V.View, t: Type, out, path: str) -> None:
        """One step `f(acc, x)` of a fold with the array accumulator `acc`, stored into `out(new)`, the
        step's destination when its new accumulator goes to `new`.

        The rule: the new accumulator is written over the old one when, within the step, the accumulator
        is written at one site and read at most at one, at the same element
        (`lift.opencl_gen.in_place.misalignment`, the criterion for a result written over an input):
        every fold the rewrite rules build, `map(add)(zip(acc, row))`, is so. A step that reads other
        elements than it writes (a reordered accumulator, `acc[0]` in every element, the whole array
        handed to a user function) would read elements it has already overwritten: it is emitted into a
        fresh buffer instead, copied over the accumulator after the step. The step is first emitted
        tentatively (an `Emission` of its own) to see its accesses; the code is kept or dropped.
        """
        watched = _memories(acc)
        parent, self.out = self.out, Emission()
        self.watched += watched
        try:
            self.call(f.f, [acc, x], t, out(acc), path)
        finally:
            del self.watched[len(self.watched) - len(watched):]
            trial, self.out = self.out, parent
        if all(misalignment(m.name, [s for w, s in trial.sites if w is m]) is None for m in watched):
            parent.merge(trial)
            return
        new = self.twin(f.init.t, space_of(acc), path)
        self.call(f.f, [acc, x], t, out(new), path)
        self.copy(new, acc)

    def copy(self, src: V.View, dst: V.View) -> None:
        """`dst := src`, element by element in sequential loops."""
        if isinstance(dst.type, ArrayType):
            self.loop("seq", 0, dst.type.length, lambda i: self.copy(src.index(i), dst.index(i)), "copy")
        else:
            self.store(dst, self.read(src))

    def call_MapAccumSeq(self, f: P.MapAccumSeq, args: list, t: Type, out, path: str) -> V.View:
        """`map-accum-seq(f, z)`: one loop; step `i` stores its element at `i` of the first component of `out`
        and its accumulator over the last one. An array accumulator lives where the result's goes (as in
        `reduce_arrays`, updated by `fold_step`), a scalar one in a private variable, stored after the loop."""
        (a,) = args
        if out is None:
            raise no_space(path)
        elems, result = out.get(0), out.get(1)
        acc_t = f.init.t
        if isinstance(acc_t, ArrayType):
            acc = result.index(Cst(0))
            self.emit(f.init, acc, f"{path}.init")
        else:
            acc = self.private_accumulator(f, path)
        step_t = TupleType(t.elems[0].elem, acc_t)

        def body(i):
            if isinstance(acc_t, ArrayType):
                self.fold_step(f, acc, a.index(i), step_t, lambda new: V.TupleView((elems.index(i), new), step_t),
                               f"{path}.f")
            else:
                self.call(f.f, [acc, a.index(i)], step_t, V.TupleView((elems.index(i), acc), step_t), f"{path}.f")

        self.fold_loop(a.type.length, body, "map-accum-seq")
        if not isinstance(acc_t, ArrayType):
            self.store(result.index(Cst(0)), self.read(acc))
        return out


def same_elements(a: V.View, b: V.View) -> bool:
    """Whether two views of one type lay every element out at the same place of the same memory."""
    if a.type != b.type:
        return False
    t, idx = a.type, ()
    while isinstance(t, ArrayType):
        idx, t = idx + (Var(f"same_{len(idx)}", 0, t.length),), t.elem
    try:
        return a.access(idx) == b.access(idx)
    except LiftCodegenError:
        return False


def _memories(view: V.View) -> list:
    """The memories holding the elements of `view` (one per component of an array of tuples held apart).

    A view maps all its elements into the same memories, so its first element tells them (a work-item's part of a
    private memory, `views.OwnedView`, its own memory)."""
    if isinstance(V.root(view), V.OwnedView):
        return [V.root(view).mem]
    t, depth = view.type, 0
    while isinstance(t, ArrayType):
        t, depth = t.elem, depth + 1
    try:
        access = view.access((Cst(0),) * depth)
    except LiftCodegenError:
        if not isinstance(t, TupleType):
            raise
        return list(dict.fromkeys(m for k in range(len(t.elems)) for m in _memories(view.get(k))))
    return list(dict.fromkeys(_accessed(access)))


def _accessed(access: A.Access) -> list:
    """The memories an access reads or writes."""
    inner = (access.inner,) if isinstance(access, A.GuardedAccess) else ()
    own = [access.mem] if isinstance(access, A.MemAccess) else []
    return own + [m for a in (getattr(access, "parts", ()) or ()) + inner for m in _accessed(a)]
