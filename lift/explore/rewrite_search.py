"""The rewrite search: candidate lowerings of a high-level program, derived by the rules, chosen by a bandit.

A candidate is a derivation: every step is a rule of `lift.rules`, so every candidate means what the
program means. The search builds one in three stages, as the issue describes:

(a) algorithmic moves at each reduction and each outermost map: the paper's own sub-derivations
    (`lift.rules.paper_derivations`): Figure 8's chunked, fused sequential reduction; Figure 9(c)'s
    float4 lanes; Figure 9(a)'s local-memory tree; Figure 2's split map, with or without vectors;
(b) lowering what is left (a map outside every map runs on global work-items, any other map and every
    reduction sequentially, reorders keep their order), then cleaning up with the fusion and identity
    rules until none applies;
(c) at each place, the kind of move and then its parameters (chunk sizes, work-items per group, vector
    width), each drawn by a UCB1 bandit whose reward is the measured throughput relative to the best so
    far (`observe`); untried options come first.

Each distinct program (up to parameter names) is proposed once.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional

from lift.errors import LiftError
from lift.explore.candidate import Candidate
from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.ir.typecheck import infer
from lift.rules import Derivation, Rewrite, RewriteEngine, canonical
from lift.rules.location import walk
from lift.types.types import ScalarType
from lift.rules.paper_derivations import chunked, copied_to_global, fused_sequential, lanes, local_tree, \
    local_tree_lowered, step

CLEANUP = ("reduce-seq-map-seq-fusion", "map-fusion", "split-join-id", "join-split-id", "asScalar-asVector-id",
           "asVector-asScalar-id", "remove-id", "map-asScalar", "map-asVector")


def _pow2_divisors(n: int, lo: int, hi: int) -> list:
    return [1 << k for k in range(n.bit_length()) if lo <= (1 << k) <= hi and n % (1 << k) == 0]


# --- moves -------------------------------------------------------------------------------------------------


def reduction_moves(at: str, length: int, in_map: bool, scalars: bool, zipped: bool) -> list:
    """The moves at a reduction `reduce(f, z) ∘ map(g)` at `at` over `length` elements: `(name, params, steps)`.

    `scalars`: the map's elements are scalars (so it may be vectorised); `zipped`: it maps over a zip.
    """
    groups, group, moves = f"{at}.args0.args0", f"{at}.args0.args0.f.f.body", []
    moves.append(("sequential", {}, step("map-to-seq", f"{at}.args0") + step("reduce-to-seq", at)
                  + step("reduce-seq-map-seq-fusion", at)))
    if scalars and length % 4 == 0:
        moves.append(("vectorize", {"width": 4}, step("vectorize-zip-map" if zipped else "vectorize-map",
                                                        f"{at}.args0", n=4) + step("reduce-lanes", at)))
    if in_map:
        return moves
    finish = step("reduce-to-seq", at)
    for c in _pow2_divisors(length, 64, length // 8):
        chunks = step("partial-reduction", at, chunk=c) + chunked(f"{at}.args0", c) + fused_sequential(group)
        moves.append(("chunks-global", {"chunk": c}, chunks + step("map-to-global", groups, dim=0) + finish))
        moves.append(("chunks-workgroup", {"chunk": c}, chunks + step("map-to-workgroup", groups, dim=0) + finish))
    vector_groups, vector_group = f"{groups}.args0", f"{groups}.args0.f.f.body"
    for g in _pow2_divisors(length, 1024, length // 8):
        for k in (1, 4, 16, 64):
            per_item = g // 4 // k
            if per_item < 16:
                continue
            lanes_ = (step("partial-reduction", at, chunk=g // 4) + chunked(f"{at}.args0", g) + lanes(group, groups)
                      + step("reduce-to-part-red", vector_group) + chunked(vector_group, per_item)
                      + fused_sequential(f"{vector_group}.args0.f.f.body"))
            items = f"{vector_group}.args0"
            moves.append(("lanes-workgroup", {"group": g, "items": k},
                          lanes_ + step("map-to-workgroup", vector_groups, dim=0)
                          + step("map-to-local", items, dim=0) + finish))
            moves.append(("lanes-global", {"group": g, "items": k},
                          lanes_ + step("map-to-global", vector_groups, dim=0) + step("map-to-seq", items) + finish))
    for g in _pow2_divisors(length, 4096, length // 4):
        for items in (32, 64, 128):
            if g // items < 2:
                continue
            tree = (step("partial-reduction", at, chunk=g) + chunked(f"{at}.args0", g)
                    + local_tree(group, items, g // items, int(math.log2(items)))
                    + step("map-to-workgroup", groups, dim=0) + local_tree_lowered(group) + copied_to_global(group))
            moves.append(("local-tree", {"group": g, "items": items}, tree + finish))
    return moves


def map_moves(at: str, length: int, vectorisable: bool) -> list:
    """The moves at a map outside every map, at `at`, over `length` elements."""
    moves = [("global", {}, step("map-to-global", at, dim=0))]
    if vectorisable and length % 4 == 0:
        moves.append(("vector-global", {"width": 4},
                      step("vectorize-map", at, n=4) + step("map-to-global", f"{at}.args0", dim=0)))
    for n in _pow2_divisors(length, 16, length // 16):
        split = step("split-join", at, n=n)
        moves.append(("chunks-global", {"chunk": n}, split + step("map-to-global", f"{at}.args0", dim=0)
                      + step("map-to-seq", f"{at}.args0.f.f")))
        if n <= 4096:
            moves.append(("workgroup", {"chunk": n}, split + step("map-to-workgroup", f"{at}.args0", dim=0)
                          + step("map-to-local", f"{at}.args0.f.f", dim=0)))
        if vectorisable and n % 4 == 0 and n <= 16384:
            moves.append(("vector-workgroup", {"chunk": n, "width": 4},
                          split + step("map-to-workgroup", f"{at}.args0", dim=0)
                          + step("vectorize-map", f"{at}.args0.f.f", n=4)
                          + step("map-to-local", f"{at}.args0.f.f.body.args0", dim=0)))
    return moves


# --- the bandit -------------------------------------------------------------------------------------------


@dataclass
class Bandit:
    """UCB1 over the options of each decision.

    Options never chosen come first, in a seeded random order, so that the first proposals do not depend
    on when results come back (a resumed search proposes the same candidates again); then the mean
    reward plus an exploration term, a choice whose result is pending counting as promising.
    """

    rng: random.Random
    stats: dict = field(default_factory=dict)

    def choose(self, decision: str, options: list) -> int:
        untried = [i for i, o in enumerate(options) if (decision, o) not in self.stats]
        if untried:
            pick = self.rng.choice(untried)
        else:
            total = sum(self.stats[(decision, o)][0] for o in options)

            def score(i):
                chosen, observed, reward = self.stats[(decision, options[i])]
                mean = reward / observed if observed else 1.0
                return mean + math.sqrt(2 * math.log(total) / chosen)

            pick = max(range(len(options)), key=score)
        chosen, observed, reward = self.stats.get((decision, options[pick]), (0, 0, 0.0))
        self.stats[(decision, options[pick])] = (chosen + 1, observed, reward)
        return pick

    def reward(self, choices: tuple, value: float) -> None:
        for decision, option in choices:
            chosen, observed, reward = self.stats.get((decision, option), (1, 0, 0.0))
            self.stats[(decision, option)] = (chosen, observed + 1, reward + value)


# --- the search -------------------------------------------------------------------------------------------


class RewriteSearch:
    """An iterable of distinct candidates for `program` under `sizes`; `observe` feeds measured times back."""

    def __init__(self, program: Lambda, sizes: Mapping[str, int], seed: int = 0, patience: int = 200):
        self.program = program
        self.sizes = dict(sizes)
        self.engine = RewriteEngine(sizes=self.sizes)
        self.bandit = Bandit(random.Random(seed))
        self.patience = patience
        self.seen: set = set()
        self.choices_of: dict = {}
        self.best_ms: Optional[float] = None
        self.failed_moves: set = set()

    def __iter__(self) -> Iterator[Candidate]:
        misses = 0
        while misses < self.patience:
            built = self.build()
            if built is None:
                misses += 1
                continue
            program, derivation, choices = built
            key = canonical(program)
            if key in self.seen:
                misses += 1
                continue
            misses = 0
            self.seen.add(key)
            params = {decision.split("/")[0]: f"{option[0]}({', '.join(f'{k}={v}' for k, v in option[1])})"
                      for decision, option in choices if "/" in decision}
            candidate = Candidate(program, tuple(_step_json(s) for s in derivation.steps), params)
            self.choices_of[candidate.key] = choices
            yield candidate

    def observe(self, candidate: Candidate, time_ms: Optional[float]) -> None:
        """A measured time (None for a failure) rewards the choices that built `candidate`."""
        choices = self.choices_of.get(candidate.key)
        if choices is None:
            return
        if time_ms is not None and (self.best_ms is None or time_ms < self.best_ms):
            self.best_ms = time_ms
        self.bandit.reward(choices, 0.0 if time_ms is None else self.best_ms / time_ms)

    # --- one candidate -------------------------------------------------------------------------------------

    def build(self):
        """One derivation: moves at reductions and outermost maps, then lowering and clean-up."""
        program, derivation, choices = self.program, Derivation(sizes=tuple(sorted(self.sizes.items()))), []
        for _ in range(16):
            point = self.next_point(program)
            if point is None:
                break
            decision, moves = point
            options = [(name, tuple(sorted(params.items()))) for name, params, _ in moves]
            live = [i for i, o in enumerate(options) if (decision, o) not in self.failed_moves] or [0]
            families = list(dict.fromkeys(options[i][0] for i in live))
            family = families[self.bandit.choose(decision, families)]
            variants = [i for i in live if options[i][0] == family]
            pick = variants[self.bandit.choose(f"{decision}/{family}", [options[i] for i in variants])]
            choices.append((decision, family))
            applied = self.apply(program, moves[pick][2])
            if applied is None:
                self.failed_moves.add((decision, options[pick]))
                if pick == 0:
                    return None
                applied = self.apply(program, moves[0][2])
                if applied is None:
                    return None
                pick = 0
                choices[-1] = (decision, options[0][0])
            program, steps = applied
            derivation = derivation + steps
            choices.append((f"{decision}/{options[pick][0]}", options[pick]))
        try:
            program, derivation = self.lower_rest(program, derivation)
            program, derivation = self.clean_up(program, derivation)
        except LiftError:
            return None
        return program, derivation, tuple(choices)

    def apply(self, program: Lambda, steps: Derivation):
        """`steps` applied in turn, or None when one does not apply."""
        try:
            for s in steps.steps:
                program = self.engine.apply(program, s)
        except LiftError:
            return None
        return program, steps

    def next_point(self, program: Lambda):
        """The first high-level reduction, else the first high-level map outside every map: its moves."""
        maps = None
        for ctx in walk(infer(program).expr, self.engine.choices):
            node = ctx.node
            if not isinstance(node, FunCall):
                continue
            inside = _enclosing_pattern(ctx)
            if isinstance(node.f, P.Reduce) and _is_call_of(node.args[0], P.Map):
                mapped = node.args[0]
                length = self.length(mapped.t)
                if length is not None:
                    zipped = _is_call_of(mapped.args[0], P.Zip)
                    scalars = _scalar_elements(mapped) or (zipped and _scalar_result(mapped))
                    return f"reduce@{ctx.path}", reduction_moves(ctx.path, length, inside, scalars, zipped)
            if maps is None and isinstance(node.f, P.Map) and not inside:
                length = self.length(node.args[0].t)
                if length is not None:
                    maps = (f"map@{ctx.path}", map_moves(ctx.path, length, _scalar_elements(node)))
        return maps

    def length(self, t) -> Optional[int]:
        try:
            return t.length.eval(self.sizes)
        except (AttributeError, LiftError):
            return None

    def lower_rest(self, program: Lambda, derivation: Derivation):
        """Lower every high-level pattern left: outermost maps on global work-items, the rest sequential."""
        for _ in range(200):
            rewrite = None
            for ctx in walk(infer(program).expr, self.engine.choices):
                node = ctx.node
                head = node.f if isinstance(node, FunCall) else node
                if isinstance(head, P.Map):
                    rewrite = Rewrite.of("map-to-seq", ctx.path) if _enclosing_pattern(ctx) else \
                        Rewrite.of("map-to-global", ctx.path, {"dim": 0})
                elif isinstance(head, P.Reduce):
                    rewrite = Rewrite.of("reduce-to-seq", ctx.path)
                elif isinstance(head, P.PartRed):
                    rewrite = Rewrite.of("part-red-to-reduce", ctx.path)
                elif isinstance(head, P.Reorder):
                    rewrite = Rewrite.of("reorder-to-id", ctx.path)
                if rewrite is not None:
                    break
            if rewrite is None:
                return program, derivation
            program = self.engine.apply(program, rewrite)
            derivation = derivation + Derivation((rewrite,))
        raise LiftError("lowering did not terminate")

    def clean_up(self, program: Lambda, derivation: Derivation):
        """Apply the fusion and identity rules wherever they apply, until none does."""
        for _ in range(100):
            found = next((rw for rw in self.engine.rewrites(program) if rw.rule in CLEANUP), None)
            if found is None:
                return program, derivation
            program = self.engine.apply(program, found)
            derivation = derivation + Derivation((found,))
        return program, derivation


def _step_json(s: Rewrite) -> dict:
    return {"rule": s.rule, "at": s.location, "params": s.param_dict}


def _enclosing_pattern(ctx) -> bool:
    """Whether the location lies inside a function passed to a map, reduction or iterate."""
    node = ctx.parent
    while node is not None:
        if isinstance(node.node, (P.AbstractMap, P.Fold, P.Iterate)):
            return True
        node = node.parent
    return False


def _is_call_of(e, cls) -> bool:
    return isinstance(e, FunCall) and isinstance(e.f, cls)


def _scalar_elements(call: FunCall) -> bool:
    return isinstance(call.args[0].t.elem, ScalarType) and _scalar_result(call)


def _scalar_result(call: FunCall) -> bool:
    return isinstance(call.t.elem, ScalarType)
