"""A fold's accumulator kept as `n`-lane vectors: `vector-accumulator`.

    reduce-seq(λacc, x. b, z) → asScalar ∘ reduce-seq(λacc, x. b', asVector-n(z))

where the body reads each row of `acc` (an innermost array of scalars) only as `asVector-n(row)` and gives
each row of its result as `asScalar(v)`: `b'` is `b` with those `asVector-n` and `asScalar` taken off, so that
the rows of the accumulator are arrays of vectors throughout.

`asVector-n` is a bijection from `[T]_{kn}` to `[Tn]_k` whose inverse is `asScalar`, on the innermost dimension
of any array (Table 2); call it `φ` on the accumulator's type. For any bijection, by induction on the folded
array,

    reduce-seq(f, z) = φ⁻¹ ∘ reduce-seq(λa, x. φ(f(φ⁻¹(a), x)), φ(z)),

and `φ(b[acc := φ⁻¹(acc)])` is `b'`: the rows of `φ⁻¹(acc)` that the zips and maps of `b` reach are
`asScalar(row)`, and `asVector-n ∘ asScalar` is the identity; `φ` of a map whose rows are `asScalar(v)` is the
map giving `v` (map fusion, 3(f), and `asVector-n ∘ asScalar = id` again).

Why: register blocking (`lift.rules.macro_rules`) vectorises the innermost update of a block
(`vectorize-zip-map`, 4(e)), which reads and writes each row of the accumulators as vectors at every step.
With scalar rows the private accumulators are a `float[h·w]` that each step loads and stores as vectors, which
the OpenCL compiler does not keep in registers; with vector rows they are `floatn[h·w/n]`, one register each.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

from lift.ir.nodes import Expr, FunCall, Lambda, Param
from lift.ir.opencl_patterns import AsScalar, AsVector
from lift.ir.patterns import AbstractMap, Get, ReduceSeq, Zip
from lift.rules.rule import RuleNotApplicable, requires, rule
from lift.types.types import ArrayType, ScalarType


def _levels(t) -> Optional[int]:
    """How many arrays enclose the rows of scalars of `t` (0: `t` is a row); None if `t` is no such array."""
    depth = -1
    while isinstance(t, ArrayType):
        depth, t = depth + 1, t.elem
    return depth if depth >= 0 and isinstance(t, ScalarType) else None


class _Conjugation:
    """Takes `asVector-n` off the reads of the accumulator's rows and `asScalar` off the rows of the result, and
    fails (`RuleNotApplicable`) at any other read of the accumulator."""

    def __init__(self, acc: Param, n: int, levels: int):
        self.acc, self.n, self.levels = acc, n, levels

    def level(self, e: Expr, tracked: dict) -> Optional[int]:
        """The level of `e` if it is the accumulator or a part of it: its rows are at level 0."""
        if isinstance(e, Param):
            return self.levels if e.name == self.acc.name else tracked.get((e.name, None))
        if isinstance(e, FunCall) and isinstance(e.f, Get) and isinstance(e.args[0], Param):
            return tracked.get((e.args[0].name, e.f.i))
        return None

    def _mapped(self, call: FunCall, tracked: dict, body) -> FunCall:
        """A map over (a zip of) parts of the accumulator: its element's parts tracked one level down, and its
        body rewritten by `body(expr, tracked)`."""
        requires(isinstance(call.f.f, Lambda) and len(call.f.f.params) == 1, "maps the accumulator point-free")
        p, arg = call.f.f.params[0], call.args[0]
        inner = dict(tracked)
        if isinstance(arg, FunCall) and isinstance(arg.f, Zip):
            args = []
            for i, a in enumerate(arg.args):
                level = self.level(a, tracked)
                if level is None:
                    args.append(self.expr(a, tracked))
                else:
                    requires(level >= 1, "zips a row of the accumulator with its scalars")
                    inner[(p.name, i)] = level - 1
                    args.append(a)
            arg = FunCall(arg.f, tuple(args))
        elif (level := self.level(arg, tracked)) is not None:
            requires(level >= 1, "maps over the scalars of a row of the accumulator")
            inner[(p.name, None)] = level - 1
        else:
            arg = self.expr(arg, tracked)
        lam = Lambda((p,), body(call.f.f.body, inner))
        return FunCall(replace(call.f, f=lam), (arg,))

    def _reads_parts(self, call: FunCall, tracked: dict) -> bool:
        arg = call.args[0]
        parts = arg.args if isinstance(arg, FunCall) and isinstance(arg.f, Zip) else (arg,)
        return any(self.level(a, tracked) is not None for a in parts)

    def expr(self, e: Expr, tracked: dict) -> Expr:
        """`e` with each `asVector-n(row)` of the accumulator's rows replaced by the row."""
        if self.level(e, tracked) is not None or (
                isinstance(e, Param) and any(name == e.name for name, _ in tracked)):
            raise RuleNotApplicable(f"reads the accumulator's {e} other than as {self.n}-lane vectors of its rows")
        if isinstance(e, FunCall) and isinstance(e.f, Get) and isinstance(e.args[0], Param):
            return e
        if not isinstance(e, FunCall):
            return e
        if isinstance(e.f, AsVector) and self.level(e.args[0], tracked) == 0:
            requires(e.f.n == self.n, f"reads the accumulator as {e.f.n}-lane vectors and as {self.n}-lane ones")
            return e.args[0]
        if isinstance(e.f, AbstractMap) and len(e.args) == 1 and self._reads_parts(e, tracked):
            return self._mapped(e, tracked, self.expr)
        return FunCall(self.function(e.f, tracked), tuple(self.expr(a, tracked) for a in e.args))

    def function(self, f, tracked: dict):
        """`f` with `expr` applied to the expressions in it (a lambda's body, a pattern's functions and values)."""
        return f.map_children(lambda c: self.expr(c, tracked) if isinstance(c, Expr) else self.function(c, tracked))

    def result(self, e: Expr, level: int, tracked: dict) -> Expr:
        """`asVector-n` of the result `e` at `level`: the rows `asScalar(v)` of `e` replaced by `v`."""
        if level == 0:
            requires(isinstance(e, FunCall) and isinstance(e.f, AsScalar), f"gives a row {e} that is not asScalar(..)")
            v = e.args[0]
            lanes = getattr(v.t.elem, "width", None)
            requires(lanes == self.n, f"gives a row of {v.t}, not of {self.n}-lane vectors")
            return self.expr(v, tracked)
        requires(isinstance(e, FunCall) and isinstance(e.f, AbstractMap) and len(e.args) == 1,
                 f"gives {e}, not a map of rows")
        return self._mapped(e, tracked, lambda body, inner: self.result(body, level - 1, inner))


def _widths(body: Expr) -> list:
    """The widths of the `asVector-n` in `body`: the candidates for `n`."""
    return sorted({s.f.n for s in body.subterms() if isinstance(s, FunCall) and isinstance(s.f, AsVector)})


def _conjugated(call) -> tuple:
    fold = call.f
    requires(isinstance(fold.f, Lambda) and len(fold.f.params) == 2, "the fold's function is not a λacc, x.")
    levels = _levels(fold.init.t)
    requires(levels is not None, f"the accumulator is {fold.init.t}, not an array of scalars")
    widths = _widths(fold.f.body)
    requires(widths, "the fold reads no vectors")
    refusals = []
    for n in widths:
        try:
            return n, _Conjugation(fold.f.params[0], n, levels).result(fold.f.body, levels, {})
        except RuleNotApplicable as e:
            refusals.append(str(e))
    raise RuleNotApplicable("; ".join(refusals))


@rule("vector-accumulator", figure="4(e)", heads=ReduceSeq, on_functions=False, match=_conjugated,
      description="a fold whose accumulator's rows it reads and writes only as n-lane vectors keeps them as vectors",
      equation="reduce-seq(λacc, x. b, z) → asScalar ∘ reduce-seq(λacc, x. b', asVector-n(z)), b' = b with "
               "asVector-n(row of acc) → row and its rows asScalar(v) → v")
def vector_accumulator(call, n, body):
    fold = call.f
    return AsScalar()(ReduceSeq(Lambda(fold.f.params, body), AsVector(n)(fold.init))(*call.args))


RULES = (vector_accumulator,)
