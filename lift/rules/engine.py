"""The rewrite engine: every (rule, location, parameters) that applies to a program, and applying one.

    engine = RewriteEngine(sizes={"N": 1 << 20})
    for rw in engine.rewrites(program):          # Rewrite("split-join", "body.args0", {"n": 128}), ...
        new = engine.apply(program, rw)         # a new, type-checked program

The program is typed once (`infer` caches by structure) and every location is visited with its
context; rules are indexed by the class of the function they rewrite, so each location only tries
the few rules that can match. `apply` checks the rule again (a derivation being replayed may name
parameters the enumeration bound would not list), rewrites the untyped program at the location, and
type-checks the result: a result that does not type-check is an unsound rule, reported as
`IllTypedRewrite`. A lambda left as `λ x. g(x)` by a rewrite of its body becomes `g`, so that
`map(λ x. reduce-seq(f, z)(x))` is `map(reduce-seq(f, z))`, as the paper writes it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator, Mapping, Optional

from lift.errors import LiftError, LiftTypeError
from lift.ir.names import program_names
from lift.ir.nodes import Lambda
from lift.ir.source_location import locate
from lift.ir.typecheck import infer
from lift.rules.registry import RULES
from lift.rules.location import Context, abstract, context_at, is_location, node_at, replace_at, untyped, walk
from lift.rules.rule import Rule, RuleNotApplicable
from lift.rules.sizes import SizeChoices


class IllTypedRewrite(LiftError):
    """A rule produced a program that does not type-check: the rule is wrong."""


@dataclass(frozen=True)
class Rewrite:
    """One rule at one location with its parameters (a sorted tuple of `(name, value)` pairs)."""

    rule: str
    location: str
    params: tuple = ()

    @classmethod
    def of(cls, rule: str, location: str, params: Optional[Mapping] = None) -> "Rewrite":
        return cls(rule, location, tuple(sorted((params or {}).items())))

    @property
    def param_dict(self) -> dict:
        return dict(self.params)

    @property
    def label(self) -> str:
        """The rule and its parameters: `split-join(n=128)`."""
        args = ", ".join(f"{k}={v}" for k, v in self.params)
        return f"{self.rule}({args})" if args else self.rule

    def __str__(self) -> str:
        return f"{self.label} at {self.location}"


@dataclass
class RewriteEngine:
    """Enumerates and applies rewrites with the given rules and size choices."""

    rules: Iterable[Rule] = RULES
    sizes: Mapping[str, int] = field(default_factory=dict)
    max_factor: int = 1 << 12

    def __post_init__(self):
        self.rules = tuple(self.rules)
        self.choices = SizeChoices(dict(self.sizes), self.max_factor)
        self._by_name = {r.name: r for r in self.rules}
        self._by_class: dict = {}

    def rule(self, name: str) -> Rule:
        try:
            return self._by_name[name]
        except KeyError:
            raise RuleNotApplicable(f"no rule named {name!r}; the rules are: {', '.join(self._by_name)}") from None

    def rewrites(self, program: Lambda) -> list:
        """Every rewrite that applies to `program`, locations outermost first."""
        return list(self._rewrites(program))

    def _rewrites(self, program: Lambda) -> Iterator[Rewrite]:
        for ctx in walk(infer(program).expr, self.choices):
            for rule in self._candidates(ctx):
                for params in rule.matches(ctx.call, ctx):
                    yield Rewrite.of(rule.name, ctx.path, params)

    def _candidates(self, ctx: Context) -> tuple:
        """The rules that rewrite the function at `ctx` (by its class, then by `on_functions`)."""
        head = _head(ctx)
        rules = self._by_class.get(type(head))
        if rules is None:
            rules = self._by_class[type(head)] = tuple(r for r in self.rules if isinstance(head, r.heads))
        return tuple(r for r in rules if r.on_functions) if ctx.is_function else rules

    def apply(self, program: Lambda, rewrite: Rewrite) -> Lambda:
        """`program` with `rewrite` applied; `RuleNotApplicable` if it does not apply there. The parameters
        the rule creates are named after `program`'s own (`lift.ir.names.program_names`), so that one rewrite
        of one program gives one result, whatever ran before."""
        rule = self.rule(rewrite.rule)
        try:
            ctx = context_at(infer(program).expr, rewrite.location, self.choices)
        except KeyError as e:
            raise locate(RuleNotApplicable(f"{rule.name}: {e.args[0]}"), program, "") from None
        try:
            return self.apply_in(program, ctx, rule, rewrite.param_dict)[1]
        except LiftError as e:  # the user's file and line of the place (`lift.ir.source_location`)
            raise locate(e, program, rewrite.location)

    def rewrites_at(self, ctx: Context, rule: Rule) -> bool:
        """Whether `rule` rewrites the kind of function at the place `ctx` (it may still not apply there)."""
        return is_location(ctx) and rule in self._candidates(ctx)

    def first_params(self, ctx: Context, rule: Rule) -> Optional[dict]:
        """The first parameters with which `rule` applies at the place `ctx`; None where it does not apply."""
        return next(rule.matches(ctx.call, ctx), None) if self.rewrites_at(ctx, rule) else None

    def apply_in(self, program: Lambda, ctx: Context, rule, params: Optional[Mapping] = None) -> tuple:
        """`(rewrite, new program)` for `rule` at the location `ctx` of the typed `program` (from `walk` or
        `context_at`), with `params`, or where they are None the first parameters the rule enumerates there.
        The parameters the rule creates are named after `program`'s own, as in `apply`."""
        rule = self.rule(rule) if isinstance(rule, str) else rule
        if not self.rewrites_at(ctx, rule):
            what = type(_head(ctx)).__name__ if is_location(ctx) else "what is not a location"
            raise RuleNotApplicable(f"{rule.name} does not rewrite {what} at {ctx.path or 'the root'}")
        with program_names(program):
            if params is None:
                params = self.first_params(ctx, rule)
                if params is None:
                    raise RuleNotApplicable(f"{rule.name} does not apply at {ctx.path}")
            else:
                rule.check(ctx.call, ctx, params)
            rewrite = Rewrite.of(rule.name, ctx.path, params)
            result = replace_at(program, *_spliced(program, ctx, rule.apply(ctx.call, params)))
        try:
            infer(result)
        except LiftTypeError as e:
            raise IllTypedRewrite(f"{rewrite} gives an ill-typed program: {e}") from None
        return rewrite, result

    def successors(self, program: Lambda, rejected: Optional[list] = None) -> Iterator[tuple]:
        """`(rewrite, new program)` for every rewrite of `program`.

        An ill-typed result raises `IllTypedRewrite`, or is left out and appended to `rejected`
        as `(rewrite, error)` when a list is given.
        """
        for rw in self.rewrites(program):
            try:
                yield rw, self.apply(program, rw)
            except IllTypedRewrite as e:
                if rejected is None:
                    raise
                rejected.append((rw, e))


def _head(ctx: Context):
    """The function a rule at `ctx` rewrites."""
    return ctx.node if ctx.is_function else ctx.node.f


def _spliced(program: Lambda, ctx: Context, new) -> tuple:
    """Where, and what, to put in `program` for the rewritten call `new` at `ctx`: the function again for
    a function location, untyped, and the enclosing lambda where its body became `g(x)`."""
    if ctx.is_function:
        new = abstract(ctx.eta_params, new)
    location = ctx.path
    new = untyped(new, ctx.node, node_at(program, location), ctx.eta_params if ctx.is_function else ())
    if ctx.step == "body" and ctx.parent.parent is not None:
        location = ctx.parent.path
        new = abstract(node_at(program, location).params, new)
    return location, new
