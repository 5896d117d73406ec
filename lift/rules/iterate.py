"""Iterate decomposition (Figure 3(a)): an iteration splits into two consecutive ones.

    iterate^(m+n)(f) → iterate^m(f) ∘ iterate^n(f)

`f^(m+n) = f^m ∘ f^n` by the definition `f^0 = id`, `f^(k+1) = f^k ∘ f` (Section 3.1); it holds for
an `f` that shrinks its array too, since both sides apply `f` to the same arrays in the same order.
"""

from __future__ import annotations

from lift.ir.patterns import Iterate
from lift.rules.rule import Rule, expect
from lift.rules.sizes import integer


class IterateDecomposition(Rule):
    name = "iterate-decomposition"
    figure = "3(a)"
    description = "iterate m+n times: iterate n times, then m times"
    equation = "iterate^(m+n)(f) → iterate^m(f) ∘ iterate^n(f)"
    heads = (Iterate,)

    def choices(self, call, ctx):
        return [{"m": m} for m in range(1, integer(self.head(call).n))]

    def apply(self, call, params):
        it, m = self.head(call), params["m"]
        expect(isinstance(m, int) and 1 <= m < integer(it.n), self, f"cannot take {m} of {it.n} iterations")
        return Iterate(m, it.f)(Iterate(it.n - m, it.f)(*call.args))


RULES = (IterateDecomposition(),)
