"""Iterate decomposition (Figure 3(a)): an iteration splits into two consecutive ones, and one iteration is
its function.

    iterate^(m+n)(f) → iterate^m(f) ∘ iterate^n(f)
    iterate^1(f) → f

`f^(m+n) = f^m ∘ f^n` by the definition `f^0 = id`, `f^(k+1) = f^k ∘ f` (Section 3.1); it holds for
an `f` that shrinks its array too, since both sides apply `f` to the same arrays in the same order. Together
they unroll an iteration into its steps (`f ∘ f ∘ .. ∘ f`): outside every map each step is then kernels of its
own, its maps on global work-items, where the code generator's `iterate` is a loop inside one work-item.
"""

from __future__ import annotations

from lift.ir.nodes import FunCall
from lift.ir.patterns import Iterate
from lift.rules.rule import requires, rule
from lift.rules.sizes import integer


@rule("iterate-decomposition", figure="3(a)", heads=Iterate,
      description="iterate m+n times: iterate n times, then m times",
      equation="iterate^(m+n)(f) → iterate^m(f) ∘ iterate^n(f)",
      choices=lambda call, ctx: [{"m": m} for m in range(1, integer(call.f.n))])
def iterate_decomposition(call, m):
    it = call.f
    requires(isinstance(m, int) and 1 <= m < integer(it.n), f"cannot take {m} of {it.n} iterations")
    return Iterate(m, it.f)(Iterate(it.n - m, it.f)(*call.args))


@rule("iterate-once", figure="3(a)", heads=Iterate,
      match=lambda call: requires(call.f.n.is_constant and integer(call.f.n) == 1, "not one iteration"),
      description="one iteration is its function applied once",
      equation="iterate^1(f) → f")
def iterate_once(call):
    return FunCall(call.f.f, call.args)


RULES = (iterate_decomposition, iterate_once)
