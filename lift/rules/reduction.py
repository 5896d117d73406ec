"""Reduction and partial reduction (Figure 3(d)): where the parallelism of a reduction comes from.

    reduce(f, z)   → reduce(f, z) ∘ part-red(f, z)
    part-red(f, z) → reduce(f, z)                              (m = 1)
                   | part-red(f, z) ∘ reorder
                   | join ∘ map(part-red(f, z)) ∘ split-n
                   | iterate-n(part-red(f, z))
    reduce(f, z)   → reduce(f, z) ∘ reduce(f, e)               (f(e, x) = x, f(z, z) ≠ z)
    reduce-seq(f, z) ∘ reduce-seq(f, e) → reduce-seq(f, z)     (f(e, x) = x)

`part-red(f, z, m)` reduces `T[n]` to `T[m]`; lift reads it as the reduction of `m` contiguous chunks of
`n/m` elements. The rules hold for an associative, commutative `f` with neutral element `z` (the paper's
contract for `reduce`), so they require an operator of type `(T, T) -> T` known to be associative
(`lift.ir.associativity`: a `reduce` of any other operator means `reduce-seq` and is only lowered
sequentially); they re-associate the reduction, which may change floating-point rounding. Every rule
keeps the contiguous-chunk meaning except `part-red ∘ reorder`, whose `reorder` may only become a real
permutation where the partial results are reduced further (`lift.rules.order_flow`).

`reduce(f, z) → reduce(f, z) ∘ part-red(f, z)` and `iterate-n` reduce `z` once per partial reduction, not
once: they require `f(z, z) = z` (`lift.ir.associativity.absorbs_itself`: a neutral `z`, or `max`, `min`
from anything), as do the rules elsewhere that pad a reduction with `z` or add lanes or rows each reduced
from `z` (`requires_absorbing`). `reduce-neutral-init` makes any other reduction of an operator with a
known neutral element `e` one of those: `reduce(f, z)(x) = f(z, reduce(f, e)(x))`, the reduction of the
one-element result from `z`, so that `z` is reduced once however the inner reduction is split (`+` from 5
over 4099 ones is 4104, not 5 more per chunk). Once both are sequential, the last rule folds the inner one's
input from `z` directly, `f(z, f(e, x1) .. xn) = f(z, x1) .. xn`: one loop, not a kernel of its own for
the outer fold of one element.

Two choices are forced by `part-red` carrying its result length `m`:

- `iterate-n(part-red)` must shrink its array by the same factor at every step, so it is written with
  that factor: `iterate-k(join ∘ map(part-red(f, z, 1)) ∘ split-c)` where `n/m = c^k` (Figure 9's
  reduction trees, `iterate-7(join ∘ map-local(reduce-seq(+, 0)) ∘ split-2)`);
- `part-red(f, z, 1)` and `reduce(f, z)` are the same function, so the first alternative is also read
  right to left: a full reduction becomes a partial one that the other alternatives expand, which is
  how a reduction is split into a tree inside one work-group.
"""

from __future__ import annotations

from lift.ir.associativity import absorbs_itself, is_associative, neutral_element, operator_of
from lift.ir.nodes import FunCall, Literal
from lift.ir.printer import paper
from lift.ir.patterns import Iterate, Join, Map, PartRed, Reduce, ReduceSeq, Reorder, Split
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer, ratio, size


def requires_associative(op) -> None:
    """A rule that re-associates a reduction of `op` applies only where `op` is known to be associative."""
    requires(is_associative(op), f"the operator {paper(op)} is not known to be associative and commutative, so "
                                 f"the reduction means reduce-seq (declare it with userfun(..., associative=True))")


def requires_absorbing(r) -> None:
    """A rule that reduces the initial value `z` of the reduction `r` more than once (once per partial reduction,
    lane or row, or once per padding element) applies only where `f` is associative and `f(z, z) = z`."""
    requires_associative(r.f)
    requires(absorbs_itself(r.f, r.init),
             f"{paper(r.f)}({r.init}, {r.init}) is not {r.init}: each partial reduction would reduce the initial "
             f"value {r.init} again (reduce-neutral-init first takes it out where {paper(r.f)} has a neutral element)")


def _monoid(call: FunCall, ctx=None) -> None:
    requires(call.args[0].t.elem == call.f.init.t,
             f"needs an operator of type (T, T) -> T, got an accumulator {call.f.init.t} over {call.args[0].t.elem}")
    requires_absorbing(call.f)


def _neutral_for(call: FunCall) -> tuple:
    r, length = call.f, call.args[0].t.length
    requires(not (length.is_constant and length.value <= 1), f"reduces {length} element")
    requires(call.args[0].t.elem == r.init.t,
             f"needs an operator of type (T, T) -> T, got an accumulator {r.init.t} over {call.args[0].t.elem}")
    requires_associative(r.f)
    requires(not absorbs_itself(r.f, r.init), f"{paper(r.f)}({r.init}, {r.init}) is {r.init} already")
    e = neutral_element(r.f, r.init.t)
    requires(e is not None, f"no neutral element of {paper(r.f)} is known")
    return (e,)


@rule("partial-reduction", figure="3(d)", heads=Reduce, param="chunk", reassociates=True, allowed=_monoid,
      description="a reduction is a reduction of partial reductions of chunks of `chunk` elements",
      equation="reduce(f, z) → reduce(f, z) ∘ part-red(f, z)")
def partial_reduction(call, chunk):
    r = call.f
    return r(PartRed(r.f, r.init, call.args[0].t.length / chunk)(call.args[0]))


@rule("reduce-neutral-init", figure="3(d)", heads=Reduce, reassociates=True, match=_neutral_for,
      description="a reduction from z is z reduced with the reduction from the neutral element",
      equation="reduce(f, z) → reduce(f, z) ∘ reduce(f, e)    (f(e, x) = x)")
def reduce_neutral_init(call, e):
    return call.f(Reduce(call.f.f, e)(call.args[0]))


def _folds_from_neutral(call: FunCall) -> None:
    outer, inner = call.f, call.args[0]
    requires(isinstance(inner, FunCall) and isinstance(inner.f, ReduceSeq) and inner.f.init.t == outer.init.t
             and _same_operator(inner.f.f, outer.f), f"the input is not a reduce-seq of {paper(outer.f)}")
    requires_associative(outer.f)
    e = neutral_element(outer.f, inner.f.init.t)
    requires(e is not None and isinstance(inner.f.init, Literal) and inner.f.init.value == e.value,
             f"the inner reduce-seq does not start from the neutral element of {paper(outer.f)}")


def _same_operator(f, g) -> bool:
    """`f` is `g`, or both compute one known operator (`λa, b. mult(a, b)` and `mult`)."""
    return f == g or operator_of(f) is not None and operator_of(f) == operator_of(g)


@rule("reduce-seq-neutral-init", figure="3(d)", heads=ReduceSeq, reassociates=True, match=_folds_from_neutral,
      description="a fold of a fold from the neutral element is one fold",
      equation="reduce-seq(f, z) ∘ reduce-seq(f, e) → reduce-seq(f, z)    (f(e, x) = x)")
def reduce_seq_neutral_init(call):
    return call.f(call.args[0].args[0])


@rule("part-red-to-reduce", figure="3(d)", heads=PartRed,
      description="a partial reduction to one element is the reduction",
      equation="part-red(f, z) → reduce(f, z)    (m = 1)",
      match=lambda call: requires(call.f.m == 1, f"reduces to {call.f.m} elements, not 1"))
def part_red_to_reduce(call):
    return Reduce(call.f.f, call.f.init)(*call.args)


@rule("reduce-to-part-red", figure="3(d)", heads=Reduce, match=_monoid,
      description="the reduction is the partial reduction to one element (3(d)'s first alternative, right to left)",
      equation="reduce(f, z) → part-red(f, z)    (m = 1)")
def reduce_to_part_red(call):
    return PartRed(call.f.f, call.f.init, 1)(*call.args)


def _not_reordered(call) -> None:
    arg = call.args[0]
    requires(not (isinstance(arg, FunCall) and isinstance(arg.f, Reorder)), "the input is already reordered")


@rule("part-red-reorder", figure="3(d)", heads=PartRed, match=_not_reordered,
      description="a partial reduction may reorder its input (commutativity)",
      equation="part-red(f, z) → part-red(f, z) ∘ reorder")
def part_red_reorder(call):
    return call.f(Reorder()(call.args[0]))


def _chunk_result(call, n):
    """How many results each chunk of `n` gives, `m*n/length`, when it is a whole divisor of `n`."""
    length = call.args[0].t.length
    n = size(n, length)
    m = None if n is None else ratio(call.f.m * n, length)
    return m if m is not None and m >= 1 and (integer(n) or m) % m == 0 else None


@rule("part-red-split-join", figure="3(d)", heads=PartRed, param="n", reassociates=True,
      fits=lambda call, n: _chunk_result(call, n) is not None,
      description="partially reduce chunks of n elements independently (the parallel reduction)",
      equation="part-red(f, z) → join ∘ map(part-red(f, z)) ∘ split-n")
def part_red_split_join(call, n):
    r = call.f
    return Join()(Map(PartRed(r.f, r.init, _chunk_result(call, n)))(Split(n)(call.args[0])))


def _shrink(call) -> int:
    shrink = ratio(call.args[0].t.length, call.f.m)
    requires(shrink is not None and shrink > 1, "needs a constant reduction ratio above 1")
    requires_absorbing(call.f)
    return shrink


def _iterations(call, ctx) -> list:
    shrink = _shrink(call)
    return [{"n": k} for k in range(1, shrink.bit_length()) if _root(shrink, k)]


@rule("part-red-iterate", figure="3(d)", heads=PartRed, reassociates=True, sized=True, choices=_iterations,
      description="partially reduce in n steps, each reducing chunks of a constant size",
      equation="part-red(f, z) → iterate-n(join ∘ map(part-red(f, z)) ∘ split-c)")
def part_red_iterate(call, n):
    shrink = _shrink(call)
    c = _root(shrink, n) if isinstance(n, int) and n >= 1 else None
    requires(c is not None, f"the reduction ratio {shrink} is not a power {n} of a factor")
    r = call.f
    return Iterate(n, Join() @ Map(PartRed(r.f, r.init, 1)) @ Split(c))(call.args[0])


def _root(x: int, k: int):
    """The integer `c >= 2` with `c**k == x`, else None."""
    c = round(x ** (1 / k))
    return next((d for d in (c - 1, c, c + 1) if d >= 2 and d ** k == x), None)


RULES = (partial_reduction, part_red_to_reduce, reduce_to_part_red, part_red_reorder, part_red_split_join,
         part_red_iterate, reduce_neutral_init, reduce_seq_neutral_init)
