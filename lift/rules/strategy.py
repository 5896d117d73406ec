"""Strategies: where and in which order rules apply, as ELEVATE (rise-lang/elevate) composes them.

A strategy is a pure function from a `Focus` (a program, a place in it, and the steps that led to it)
to a new `Focus`, or None where it fails. The primitive strategy `rewrite(rule, **params)` applies one
rule at the focused place and records the step `(rule, location, parameters)`; the rest only compose
strategies and move the focus, so that what a strategy did is a `Derivation`, replayable exactly:

    reduce_of_map = is_call(Reduce) & argument_is(is_call(Map))
    figure_8 = outermost(reduce_of_map, rewrite("partial-reduction", chunk=128) >> ...)
    derivation = derive(figure_8, asum)          # the recorded steps; `derivation.replay(asum)` is the result

- combinators: `s >> t` (seq), `s | t` (left choice), `try_`, `repeat`, `progress`, `identity`, `fail`;
- traversals (the focus returns where it was afterwards): `one` and `all_` over the children,
  `topdown`, `bottomup`, `outermost(pred, s)`, `innermost(pred, s)`, `at_first(pred, s)`, `normalize(s)`,
  `everywhere(pred, s)`, the check `nowhere(pred)`,
  and the steps into a call's function, its `i`-th argument and a lambda's body (`function`, `argument`,
  `body`, `mapped_body`);
- selectors: predicates on the typed context of a place (`is_call(Reduce)`, `is_fun(P.AbstractMap)`,
  `has_type(...)`, `inside(MapWrg)`, `argument_is(...)`), combined with `&`, `|` and `~`, and turned
  into strategies by `where`; `apply_at(pred, rule, **params)` applies a rule at the outermost match.

A rule given no parameters applies with the first ones it enumerates at the place (`Rule.matches`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import Callable, Mapping, Optional

from lift.errors import LiftError
from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.ir.typecheck import infer
from lift.rules import location as L
from lift.rules.derivation import Derivation
from lift.rules.engine import RewriteEngine
from lift.rules.rule import RuleNotApplicable

REPEAT_LIMIT = 10000


class StrategyFailed(LiftError):
    """A strategy did not apply to a program."""


@dataclass(frozen=True)
class Focus:
    """A program being rewritten, the place in it strategies look at (`at`, a location path), and the steps
    so far. `ctx` is the typed context of that place (None where the place no longer exists)."""

    program: Lambda
    engine: RewriteEngine
    at: str = ""
    steps: tuple = ()

    @cached_property
    def ctx(self) -> Optional[L.Context]:
        try:
            return L.context_of(infer(self.program).expr, self.at, self.engine.choices)
        except KeyError:
            return None

    def to(self, ctx: L.Context) -> "Focus":
        """The same program focused on `ctx` (a context of this program's typed tree)."""
        focus = replace(self, at=ctx.path)
        focus.__dict__["ctx"] = ctx
        return focus

    def back_to(self, at: str) -> "Focus":
        return self if at == self.at else replace(self, at=at)

    def derivation(self) -> Derivation:
        return Derivation(self.steps, tuple(sorted(self.engine.sizes.items())))


class Strategy:
    """A function `Focus → Focus | None` with a name; `s >> t` runs `t` after `s`, `s | t` tries `t` where
    `s` fails."""

    __slots__ = ("run", "_name")

    def __init__(self, run: Callable[[Focus], Optional[Focus]], name):
        self.run, self._name = run, name

    @property
    def name(self) -> str:
        """The strategy as ELEVATE would write it (built when asked: strategies are made often, printed rarely)."""
        return self._name() if callable(self._name) else self._name

    def __call__(self, focus: Focus) -> Optional[Focus]:
        return self.run(focus)

    def __rshift__(self, other: "Strategy") -> "Strategy":
        return seq(self, other)

    def __or__(self, other: "Strategy") -> "Strategy":
        return choice(self, other)

    def __repr__(self) -> str:
        return self.name


def derive(strategy: Strategy, program: Lambda, sizes: Optional[Mapping] = None,
           engine: Optional[RewriteEngine] = None) -> Derivation:
    """The steps `strategy` takes on `program` (under the size binding `sizes`); `StrategyFailed` where it fails."""
    result = strategy(Focus(program, engine or RewriteEngine(sizes=dict(sizes or {}))))
    if result is None:
        shown = repr(strategy)
        shown = shown if len(shown) <= 300 else shown[:300] + " ..."
        raise StrategyFailed(f"the strategy {shown} does not apply to the program")
    return result.derivation()


# --- rules --------------------------------------------------------------------------------------------------


def rewrite(rule, **params) -> Strategy:
    """Apply `rule` (a name or a `Rule`) at the focus, with `params` or the first parameters it enumerates."""
    name = getattr(rule, "name", rule)

    def run(focus):
        ctx = focus.ctx
        engine = focus.engine
        known = engine.rule(name)
        if ctx is None or not engine.rewrites_at(ctx, known):
            return None
        try:
            step, program = engine.apply_in(focus.program, ctx, known, params or None)
        except RuleNotApplicable:
            return None
        return Focus(program, engine, focus.at, focus.steps + (step,))

    return Strategy(run, lambda: f"{name}({', '.join(f'{k}={v}' for k, v in params.items())})" if params else name)


def force(rule, **params) -> Strategy:
    """Apply `rule` at the focus with `params`, raising `RuleNotApplicable` (saying why) where it does not
    apply: for a place already chosen, where failing is an error rather than a reason to look elsewhere."""
    name = getattr(rule, "name", rule)

    def run(focus):
        ctx = focus.ctx
        if ctx is None:
            raise RuleNotApplicable(f"{name}: no place {focus.at!r}")
        step, program = focus.engine.apply_in(focus.program, ctx, focus.engine.rule(name), params)
        return Focus(program, focus.engine, focus.at, focus.steps + (step,))

    return Strategy(run, lambda: f"force({name}, {params})")


def applies(rule) -> Strategy:
    """Succeeds, changing nothing, where `rule` applies at the focus with some parameters."""
    name = getattr(rule, "name", rule)

    def run(focus):
        ctx = focus.ctx
        return focus if ctx is not None and focus.engine.first_params(ctx, focus.engine.rule(name)) is not None \
            else None

    return Strategy(run, lambda: f"applies({name})")


def first_of(rules) -> Strategy:
    """The first of `rules` (names or rules) that applies at the focus."""
    return choice(*(rewrite(r) for r in rules))


# --- combinators ----------------------------------------------------------------------------------------------


identity = Strategy(lambda focus: focus, "id")
fail = Strategy(lambda focus: None, "fail")


def seq(*strategies: Strategy) -> Strategy:
    """Each of `strategies` in turn; fails where one does."""
    def run(focus):
        for s in strategies:
            focus = s(focus)
            if focus is None:
                return None
        return focus

    return Strategy(run, lambda: "(" + " ; ".join(map(repr, strategies)) + ")")


def choice(*strategies: Strategy) -> Strategy:
    """The first of `strategies` that succeeds (ELEVATE's `<+`)."""
    def run(focus):
        for s in strategies:
            result = s(focus)
            if result is not None:
                return result
        return None

    return Strategy(run, lambda: "(" + " <+ ".join(map(repr, strategies)) + ")")


def try_(s: Strategy) -> Strategy:
    return Strategy(lambda focus: s(focus) or focus, lambda: f"try({s})")


def repeat(s: Strategy, limit: int = REPEAT_LIMIT) -> Strategy:
    """`s` as long as it succeeds (never fails); `StrategyFailed` past `limit` applications."""
    def run(focus):
        for _ in range(limit):
            result = s(focus)
            if result is None:
                return focus
            focus = result
        raise StrategyFailed(f"repeat({s}) did not terminate in {limit} steps")

    return Strategy(run, lambda: f"repeat({s})")


def progress(s: Strategy) -> Strategy:
    """`s`, failing where it took no step (so that `repeat(progress(s))` stops when `s` changes nothing)."""
    def run(focus):
        result = s(focus)
        return result if result is not None and len(result.steps) > len(focus.steps) else None

    return Strategy(run, lambda: f"progress({s})")


# --- traversals -----------------------------------------------------------------------------------------------


def _over(places: Callable, s: Strategy, name: str) -> Strategy:
    """`s` at the first place of `places(ctx)` where it succeeds; the focus then returns where it was."""
    def run(focus):
        ctx = focus.ctx
        if ctx is None:
            return None
        for place in places(ctx):
            result = s(focus.to(place))
            if result is not None:
                return result.back_to(focus.at)
        return None

    return Strategy(run, lambda: f"{name}({s})")


def one(s: Strategy) -> Strategy:
    """`s` at the first child of the focus (a call's function or arguments, a pattern's function, a lambda's
    body) where it succeeds."""
    return _over(L.children, s, "one")


def topdown(s: Strategy) -> Strategy:
    """`s` at the outermost place at or under the focus where it succeeds (pre-order; ELEVATE's `topDown`)."""
    return _over(L.subtree, s, "topdown")


def bottomup(s: Strategy) -> Strategy:
    """`s` at the innermost place at or under the focus where it succeeds (post-order)."""
    return _over(L.subtree_innermost, s, "bottomup")


def all_(s: Strategy) -> Strategy:
    """`s` at every child of the focus in turn; fails where it fails at one."""
    def run(focus):
        at = focus.at
        if focus.ctx is None:
            return None
        for i in range(len(L.children(focus.ctx))):
            kids = L.children(focus.ctx) if focus.ctx is not None else []
            result = s(focus.to(kids[i])) if i < len(kids) else None
            if result is None:
                return None
            focus = result.back_to(at)
        return focus

    return Strategy(run, lambda: f"all({s})")


def outermost(pred: "Selector", s: Strategy = identity) -> Strategy:
    """`s` at the outermost place where `pred` holds and `s` succeeds (ELEVATE's `outermost`)."""
    return topdown(where(pred) >> s)


def innermost(pred: "Selector", s: Strategy = identity) -> Strategy:
    """`s` at the innermost place where `pred` holds and `s` succeeds."""
    return bottomup(where(pred) >> s)


def at_first(pred: "Selector", s: Strategy) -> Strategy:
    """`s` at the first place, outermost first, where `pred` holds; fails where there is none or `s` fails there
    (unlike `outermost`, which goes on to the next place)."""
    def run(focus):
        ctx = focus.ctx
        place = None if ctx is None else next((c for c in L.subtree(ctx) if pred(c)), None)
        result = None if place is None else s(focus.to(place))
        return None if result is None else result.back_to(focus.at)

    return Strategy(run, lambda: f"at_first({pred}, {s})")


def nowhere(pred: "Selector") -> Strategy:
    """Succeeds, changing nothing, where `pred` holds at no place at or under the focus."""
    def run(focus):
        ctx = focus.ctx
        return focus if ctx is not None and not any(pred(c) for c in L.subtree(ctx)) else None

    return Strategy(run, lambda: f"nowhere({pred})")


def normalize(s: Strategy) -> Strategy:
    """`s` wherever it applies, outermost first, until it applies nowhere (ELEVATE's `normalize`)."""
    return repeat(topdown(s))


def everywhere(pred: "Selector", s: Strategy) -> Strategy:
    """`s` at every place where `pred` holds, outermost first, until no such place is left where it applies."""
    return normalize(where(pred) >> s)


def apply_at(pred: "Selector", rule, **params) -> Strategy:
    """`rule` with `params` at the outermost place where `pred` holds and the rule applies."""
    return outermost(pred, rewrite(rule, **params))


def _step(move: Callable, s: Strategy, name: str) -> Strategy:
    def run(focus):
        ctx = focus.ctx
        place = None if ctx is None else move(ctx)
        if place is None:
            return None
        result = s(focus.to(place))
        return None if result is None else result.back_to(focus.at)

    return Strategy(run, lambda: f"{name}({s})")


def argument(i: int, s: Strategy) -> Strategy:
    """`s` at the `i`-th argument of the call at the focus."""
    return _step(lambda ctx: L.argument(ctx, i), s, f"argument{i}")


def function(s: Strategy) -> Strategy:
    """`s` at the function of the call at the focus, or at the function a pattern at the focus applies."""
    return _step(lambda ctx: L.descend(ctx, "f"), s, "function")


def body(s: Strategy) -> Strategy:
    """`s` at the body of the lambda at the focus."""
    return _step(lambda ctx: L.descend(ctx, "body"), s, "body")


def arguments(*path: int) -> Callable[[Strategy], Strategy]:
    """`arguments(0, 1)(s)`: `s` at the second argument of the first argument of the call at the focus."""
    def at(s: Strategy) -> Strategy:
        for i in reversed(path):
            s = argument(i, s)
        return s

    return at


def mapped_body(s: Strategy) -> Strategy:
    """`s` at the body of the lambda that the map (or other pattern) called at the focus applies:
    `g` in `map(λ x. g)(xs)`."""
    return function(function(body(s)))


# --- selectors ------------------------------------------------------------------------------------------------


class Selector:
    """A predicate on the typed context of a place; `&`, `|` and `~` combine them."""

    def __init__(self, test: Callable[[L.Context], bool], name: str):
        self.test, self.name = test, name

    def __call__(self, ctx: L.Context) -> bool:
        return self.test(ctx)

    def __and__(self, other: "Selector") -> "Selector":
        return Selector(lambda ctx: self.test(ctx) and other.test(ctx), f"({self} & {other})")

    def __or__(self, other: "Selector") -> "Selector":
        return Selector(lambda ctx: self.test(ctx) or other.test(ctx), f"({self} | {other})")

    def __invert__(self) -> "Selector":
        return Selector(lambda ctx: not self.test(ctx), f"~{self}")

    def __repr__(self) -> str:
        return self.name


def where(pred: Selector) -> Strategy:
    """Succeeds, changing nothing, where `pred` holds at the focus (ELEVATE's `isApplied`-style checks)."""
    def run(focus):
        return focus if focus.ctx is not None and pred(focus.ctx) else None

    return Strategy(run, lambda: f"where({pred})")


def _name(cls) -> str:
    return "|".join(c.__name__ for c in cls) if isinstance(cls, tuple) else cls.__name__


def is_call(cls) -> Selector:
    """A call of a function of class `cls` (a class or a tuple of them): `is_call(Reduce)`."""
    return Selector(lambda ctx: isinstance(ctx.node, FunCall) and isinstance(ctx.node.f, cls), f"is_call({_name(cls)})")


def is_fun(cls) -> Selector:
    """A call of, or a function passed to a pattern that is, a function of class `cls`: where rules on
    functions (`map(f) → map-seq(f)`) apply."""
    def test(ctx):
        head = ctx.node.f if isinstance(ctx.node, FunCall) else ctx.node
        return L.is_location(ctx) and isinstance(head, cls)

    return Selector(test, f"is_fun({_name(cls)})")


def has_type(pred: Callable) -> Selector:
    """A call whose (typed) result satisfies `pred(t)`."""
    return Selector(lambda ctx: isinstance(ctx.node, FunCall) and pred(ctx.node.t), "has_type")


def argument_is(pred: Selector, i: int = 0) -> Selector:
    """A call whose `i`-th argument satisfies `pred`: `is_call(Reduce) & argument_is(is_call(Map))`."""
    def test(ctx):
        arg = L.argument(ctx, i) if isinstance(ctx.node, FunCall) else None
        return arg is not None and pred(arg)

    return Selector(test, f"argument{i}({pred})")


def inside(cls=(P.AbstractMap, P.Fold, P.Iterate)) -> Selector:
    """A place inside a pattern of class `cls` (by default any map, reduction or iterate): in the function
    it applies."""
    def test(ctx):
        ctx = ctx.parent
        while ctx is not None:
            if isinstance(ctx.node, cls):
                return True
            ctx = ctx.parent
        return False

    return Selector(test, f"inside({_name(cls)})")


def _at_top(ctx) -> bool:
    while ctx.parent is not None and ctx.parent.parent is not None:
        if not isinstance(ctx.parent.node, FunCall) or ctx.step == "f":
            return False
        ctx = ctx.parent
    return ctx.parent is not None and ctx.step == "body"


at_top = Selector(_at_top, "at_top")
"""A call reached from the program's body through arguments only (outside every function)."""
anywhere = Selector(lambda ctx: True, "anywhere")
