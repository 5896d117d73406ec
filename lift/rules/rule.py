"""What a rewrite rule is: a named, proven equation `lhs → rhs` of the paper's Section 4.

A rule rewrites one *call*: a function applied to its arguments, typed. Rules that rewrite a
function, such as `map(f) → map-seq(f)`, also apply where the function is not called but passed to
a pattern (the `map(abs)` of `map(map(abs))`): the engine hands them the call `map(abs)(x)` of a fresh
`x`, and abstracts `x` again afterwards. A rule says where it applies and with which parameters
(`matches`), checks a given choice (`check`, used when a derivation is replayed), and builds the
rewritten call (`apply`). All three are pure.

Most rules have no parameters (`Equation`); those with a size parameter (a split factor, a stride)
enumerate the factors of a length (`SizedRule`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Iterable, Iterator, Mapping

from lift.errors import LiftError
from lift.ir.nodes import Expr, FunCall, FunDecl
from lift.rules.sizes import SizeChoices, size


class RuleNotApplicable(LiftError):
    """A rule was asked to rewrite where it does not apply; the message says why."""


class Rule(ABC):
    """A rewrite rule. Subclasses set the attributes and implement `choices` and `apply`.

    - `heads`: the classes of the called function that the rule rewrites (indexes the engine);
    - `on_functions`: whether it also rewrites a function passed to a pattern (see the module);
    - `reassociates`: whether it reorders a reduction, so that floating-point results may differ
      in rounding (the rule is exact on associative, commutative operators, as `reduce` requires);
    - `sized`: whether it depends on array lengths. Inside an `iterate` whose function changes the
      length of its array, the types a rule sees are those of the first iteration only, so such
      rules do not apply there.
    """

    name: str = ""
    figure: str = ""
    description: str = ""
    equation: str = ""
    heads: tuple = ()
    on_functions: bool = True
    reassociates: bool = False
    sized: bool = False

    @abstractmethod
    def choices(self, call: FunCall, ctx) -> Iterable[dict]:
        """The parameter choices at `call`; raises `RuleNotApplicable` where the rule does not match."""

    def accepts(self, call: FunCall, ctx, params: Mapping) -> bool:
        """Whether `params`, not necessarily enumerated by `choices`, are valid at `call`."""
        return dict(params) in list(self.choices(call, ctx))

    @abstractmethod
    def apply(self, call: FunCall, params: Mapping) -> Expr:
        """The rewritten call (an expression over the same arguments)."""

    def head(self, call: FunCall) -> FunDecl:
        """The called function, checked to be one this rule rewrites."""
        expect(isinstance(call.f, self.heads), self, f"does not rewrite {type(call.f).__name__}")
        return call.f

    def matches(self, call: FunCall, ctx) -> Iterator[dict]:
        """Every enumerated parameter choice with which the rule applies at `call` (none if it does not)."""
        if self.sized and ctx.in_resizing_iteration():
            return
        try:
            yield from self.choices(call, ctx)
        except RuleNotApplicable:
            return

    def check(self, call: FunCall, ctx, params: Mapping) -> None:
        """Raise `RuleNotApplicable`, saying why, unless the rule applies at `call` with `params`."""
        expect(not (self.sized and ctx.in_resizing_iteration()), self,
               "depends on array lengths, which change from one iteration of the enclosing iterate to the next")
        if not self.accepts(call, ctx, params):
            options = ", ".join(_show(p) for p in self.choices(call, ctx)) or "none"
            raise RuleNotApplicable(f"{self.name}: parameters {_show(params)} do not apply here (valid: {options})")

    def __repr__(self) -> str:
        return f"<rule {self.name} ({self.figure})>"


class Equation(Rule):
    """A rule without parameters: `match` checks the shape of the call and returns the parts that
    `rewrite` uses; `allowed` checks the context (the thread hierarchy, where a value goes)."""

    def match(self, call: FunCall) -> tuple:
        """The parts of `call` the rewrite needs; raises `RuleNotApplicable` if the shape differs."""
        self.head(call)
        return ()

    def allowed(self, call: FunCall, ctx) -> None:
        """Raise `RuleNotApplicable` where the context forbids the rewrite."""

    @abstractmethod
    def rewrite(self, call: FunCall, *parts) -> Expr:
        """The rewritten call, from the parts `match` returned."""

    def choices(self, call, ctx):
        self.match(call)
        self.allowed(call, ctx)
        return [{}]

    def apply(self, call, params):
        return self.rewrite(call, *self.match(call))


class SizedRule(Rule):
    """A rule with one size parameter `param`, which must divide `length(call)` and `fits`.

    The enumerated choices are the length's factors (`lift.rules.sizes`); a replayed derivation may
    name any size, a symbolic one too (`"N/128"`). Subclasses implement `rewrite(call, size)`.
    """

    param: str = "n"
    sized = True

    def length(self, call: FunCall):
        return call.args[0].t.length

    def allowed(self, call: FunCall, ctx) -> None:
        """Raise `RuleNotApplicable` where the rule does not apply whatever the size."""

    def fits(self, call: FunCall, size) -> bool:
        """Whether a size that divides the length suits the rule."""
        return True

    @abstractmethod
    def rewrite(self, call: FunCall, size) -> Expr:
        """The rewritten call for the size parameter `size` (an expression)."""

    def choices(self, call, ctx):
        self.allowed(call, ctx)
        return [{self.param: n} for n in ctx.choices.factors(self.length(call)) if self.fits(call, n)]

    def accepts(self, call, ctx, params):
        self.allowed(call, ctx)
        return self._valid(call, params, ctx.choices)

    def apply(self, call, params):
        self.head(call)
        expect(self._valid(call, params, SizeChoices()), self,
               f"parameters {_show(params)} do not fit an array of length {self.length(call)}")
        return self.rewrite(call, size(params[self.param], self.length(call)))

    def _valid(self, call, params, choices) -> bool:
        n = params.get(self.param)
        return set(params) == {self.param} and choices.divides(n, self.length(call)) and self.fits(call, n)


def _show(params: Mapping) -> str:
    return "{" + ", ".join(f"{k}={v}" for k, v in params.items()) + "}"


def expect(condition: bool, rule: Rule, why: str) -> None:
    """Raise `RuleNotApplicable` for `rule` with `why` unless `condition` holds."""
    if not condition:
        raise RuleNotApplicable(f"{rule.name}: {why}")


def arg_call(call: FunCall, rule: Rule, cls, what: str) -> FunCall:
    """The argument of `call`, which must be a one-argument call of a `cls` (`what`), for `f ∘ g` rules."""
    inner = call.args[0] if len(call.args) == 1 else None
    expect(isinstance(inner, FunCall) and isinstance(inner.f, cls) and len(inner.args) == 1, rule,
           f"expects {what} applied to the argument")
    return inner
