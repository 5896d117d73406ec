"""What a rewrite rule is: a named, proven equation `lhs → rhs` of the paper's Section 4.

A rule rewrites one *call*: a function applied to its arguments, typed. Rules that rewrite a
function, such as `map(f) → map-seq(f)`, also apply where the function is not called but passed to
a pattern (the `map(abs)` of `map(map(abs))`): the engine hands them the call `map(abs)(x)` of a fresh
`x`, and abstracts `x` again afterwards. A rule says where it applies and with which parameters
(`matches`), checks a given choice (`check`, used when a derivation is replayed), and builds the
rewritten call (`apply`). All three are pure.

Most rules have no parameters (`Equation`); those with a size parameter (a split factor, a stride)
enumerate the factors of a length (`SizedRule`). A rule is written as a function with its metadata
(`@rule("split-join", figure="3(c)", equation=..., heads=Map, param="n")`), or, for a family of rules
built from one pattern (a lowering per kind of map), as a class with parameters.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Callable, Iterable, Iterator, Mapping, Optional

from lift.errors import LiftError
from lift.ir.nodes import Expr, FunCall, FunDecl
from lift.ir.opencl_patterns import Vectorize
from lift.ir.userfun import UserFun
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


def requires_arg_call(call: FunCall, cls, what: str) -> None:
    """`arg_call`'s check, in a rule written as a function (`@rule`)."""
    inner = call.args[0] if len(call.args) == 1 else None
    requires(isinstance(inner, FunCall) and isinstance(inner.f, cls) and len(inner.args) == 1,
             f"expects {what} applied to the argument")


def called_userfun(call: FunCall):
    """The user function `u` a call `u(..)` or `vectorize-n(u)(..)` applies, in a rule written as a function (`@rule`)
    that rewrites the user function in either (`with_userfun`)."""
    u = call.f.f if isinstance(call.f, Vectorize) else call.f
    requires(isinstance(u, UserFun), f"{u} is not a user function")
    return u


def with_userfun(call: FunCall, u) -> FunCall:
    """`call`, `u(..)` or `vectorize-n(u)(..)`, with the user function `u` in place of the one it applies."""
    return FunCall(replace(call.f, f=u) if isinstance(call.f, Vectorize) else u, call.args)


def requires(condition: bool, why: str) -> None:
    """In a rule written as a function (`@rule`): raise `RuleNotApplicable` with `why` unless `condition` holds
    (the rule adds its name)."""
    if not condition:
        raise RuleNotApplicable(why)


def rule(name: str, *, figure: str, equation: str, description: str, heads, on_functions: bool = True,
         reassociates: bool = False, sized: bool = False, match: Optional[Callable] = None,
         allowed: Optional[Callable] = None, param: Optional[str] = None, fits: Optional[Callable] = None,
         choices: Optional[Callable] = None):
    """A rule written as a function, with its metadata: `fn(call)` builds the rewritten call, or `fn(call, size)`
    where `param` names a size parameter (a `SizedRule`: `size` divides the length and `fits(call, size)`).

        @rule("reduce-to-seq", figure="4(b)", equation="reduce(f, z) → reduce-seq(f, z)", heads=Reduce, ...)
        def reduce_to_seq(call):
            return ReduceSeq(call.f.f, call.f.init)(*call.args)

    `match(call)` checks the call's shape and `allowed(call, ctx)` its context, raising through `requires`
    where the rule does not apply; a `match` that returns a tuple hands those parts to the rewrite,
    `fn(call, *parts)`. A rule with other parameters gives `choices(call, ctx)`, the list of their
    enumerated values (dicts), and is applied as `fn(call, **params)`, which checks them through `requires`.
    The registry reads the metadata from the rule the decorator returns.
    """
    def make(fn: Callable) -> Rule:
        attrs = dict(name=name, figure=figure, equation=equation, description=description,
                     heads=heads if isinstance(heads, tuple) else (heads,), on_functions=on_functions,
                     reassociates=reassociates, __doc__=fn.__doc__)
        if choices is not None:
            return type(_snake(name), (_FunctionRule,), dict(attrs, sized=sized))(fn, choices)
        if param is None:
            return type(_snake(name), (_FunctionEquation,), dict(attrs, sized=sized))(fn, match, allowed)
        return type(_snake(name), (_FunctionSizedRule,), dict(attrs, param=param))(fn, allowed, fits)

    return make


def _snake(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("-"))


def _named(rule_: Rule, e: RuleNotApplicable) -> RuleNotApplicable:
    why = str(e)
    return RuleNotApplicable(why if why.startswith(f"{rule_.name}: ") else f"{rule_.name}: {why}")


class _FunctionEquation(Equation):
    """An `Equation` whose rewrite, shape check and context check are functions (see `rule`)."""

    def __init__(self, build: Callable, match: Optional[Callable], allowed: Optional[Callable]):
        self._build, self._match, self._allowed = build, match, allowed

    def match(self, call):
        self.head(call)
        if self._match is None:
            return ()
        try:
            parts = self._match(call)
        except RuleNotApplicable as e:
            raise _named(self, e) from None
        return parts if isinstance(parts, tuple) else ()

    def allowed(self, call, ctx):
        if self._allowed is not None:
            try:
                self._allowed(call, ctx)
            except RuleNotApplicable as e:
                raise _named(self, e) from None

    def rewrite(self, call, *parts):
        return self._build(call, *parts)


class _FunctionSizedRule(SizedRule):
    """A `SizedRule` whose rewrite, context check and size condition are functions (see `rule`)."""

    def __init__(self, build: Callable, allowed: Optional[Callable], fits: Optional[Callable]):
        self._build, self._allowed, self._fits = build, allowed, fits

    def allowed(self, call, ctx):
        self.head(call)
        if self._allowed is not None:
            try:
                self._allowed(call, ctx)
            except RuleNotApplicable as e:
                raise _named(self, e) from None

    def fits(self, call, size) -> bool:
        return self._fits is None or self._fits(call, size)

    def rewrite(self, call, size):
        return self._build(call, size)


class _FunctionRule(Rule):
    """A `Rule` with parameters whose enumeration and rewrite are functions (see `rule`)."""

    def __init__(self, build: Callable, choices: Callable):
        self._build, self._choices = build, choices

    def choices(self, call, ctx):
        self.head(call)
        try:
            return self._choices(call, ctx)
        except RuleNotApplicable as e:
            raise _named(self, e) from None

    def apply(self, call, params):
        self.head(call)
        try:
            return self._build(call, **params)
        except RuleNotApplicable as e:
            raise _named(self, e) from None
