"""The rewrite search: candidate lowerings of a high-level program, derived by the rules, chosen by a bandit.

A candidate is a derivation: every step is a rule of `lift.rules`, so every candidate means what the
program means. The search builds one in three stages, as the issue describes:

(a) algorithmic moves (`lift.explore.search_moves`) at each reduction and each outermost map: strategies built
    from the paper's own derivations (`lift.rules.paper_derivations`), applied at that place: Figure 8's chunked,
    fused sequential reduction; Figure 9(c)'s float4 lanes; Figure 9(a)'s local-memory tree; Figure 2's split
    map, with or without vectors; and where selectors find their shapes, the macro rules of
    `lift.rules.column_sums`: a bare reduction given its map (`reduce-map-id`), column reductions as partial
    column sums folded row by row, stencil windows in blocks of results folding shifted rows of the grid (in
    2-D too), transpositions in tiles;
(b) lowering what is left (`lower_rest`: a map outside every map runs on global work-items, any other map
    and every reduction sequentially, reorders keep their order), then cleaning up with the fusion and
    identity rules until none applies (`clean_up`), a fold's multiply-add of two user functions composed into
    one (`userfun-composition`: contracted), the loops of constant trip count in user functions unrolled or
    not (`userfun-loop-unroll`, where it applies: unrolled, a window the loops index is registers),
    and the sine and cosine of one angle computed by one call (`userfun-sincos`, where it applies);
(c) at each place, the kind of move and then its parameters (chunk sizes, work-items per group, vector
    width), each drawn by a UCB1 bandit whose reward is the measured throughput relative to the best so
    far (`observe`); untried options come first.

Before these come the default lowering's candidate (`lift.rules.default_lowering`: what `lift.compile` runs
without a tuned winner, so that a short search never ends slower than it) and those of the macro-rule space
(`lift.explore.macro_space`: register blocking, interchange and 2-D thread mappings wherever the macro rules
match, as for matrix multiply), and the default lowering with every stencil window's fold unrolled (the default
folds a long 1-D window in a loop, which builds fast). Each distinct program (up to parameter names) is proposed
once.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Iterator, Mapping, Optional

from lift.errors import LiftError
from lift.explore.candidate import DEFAULT_LOWERING, Candidate
from lift.explore.cost_model import DeviceModel
from lift.explore.macro_space import LOCAL_MEM_BYTES, macro_derivations
from lift.explore.search_moves import (EARLY_COLUMN_STRIPS, EARLY_ROW_BLOCKS, ROW_BLOCKS, ROW_LANES,
                                       array_reduction_moves, batched_grid, batched_moves, column_moves,
                                       column_strip_moves, grid_moves, map_moves,
                                       reduction_moves, row_block_moves, transposition_moves, window_moves)
from lift.ir import patterns as P
from lift.ir.associativity import absorbs_itself, neutral_element
from lift.ir.nodes import FunCall, Lambda
from lift.ir.typecheck import infer
from lift.rules import Rewrite, RewriteEngine, canonical
from lift.rules import location as L
from lift.rules.location import subtree, walk
from lift.rules.column_sums import MAX_WINDOW, column_reduction, grid_windows, private_folds, transposition, windows
from lift.rules.default_lowering import (MAX_UNROLLED_WINDOW, ROW_BLOCK, ROW_LANES as DEFAULT_ROW_LANES, clean_up,
                                        composed_userfuns, copied_view, default_lowering, fused_sincos, high_level,
                                        hoist_invariants, named_elements, scalar_arguments, unrolled_iterations,
                                        unrolled_userfuns)
from lift.rules.default_lowering import lower_rest as lower_high_level
from lift.rules.fold_splitting import folds_split_off
from lift.rules.index_columns import index_columns
from lift.rules.reduction_choice import LANES, reduces_rows
from lift.rules.strategy import Focus, Selector, argument, inside, nowhere, rewrite
from lift.types.types import ScalarType, TupleType

lower_rest = lower_high_level >> nowhere(high_level)
"""Every high-level pattern left lowered (`lift.rules.default_lowering.lower_rest`); fails where one of them
cannot be lowered so."""


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
    """An iterable of distinct candidates for `program` under `sizes`; `observe` feeds measured times back.

    A `lift.explore.search_strategy.SearchStrategy`."""

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
        self.vector_width = LANES
        self.local_mem_bytes = LOCAL_MEM_BYTES

    def use_device(self, model: DeviceModel) -> None:
        """The bandit learns from measured times alone; the device's vector width picks the default lowering's
        vectors, its local memory the macro space's staged tiles."""
        self.vector_width = model.vector_width
        self.local_mem_bytes = model.local_mem_bytes

    def __iter__(self) -> Iterator[Candidate]:
        for program, derivation, params in self.default_and_macro_derivations():
            key = canonical(program)
            if key not in self.seen:
                self.seen.add(key)
                yield Candidate(program, tuple(_step_json(s) for s in derivation.steps), params)
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

    def default_and_macro_derivations(self) -> Iterator[tuple]:
        """`(lowered program, derivation, params)`: the default lowering's (what `lift.compile` runs without a
        tuned winner, so that a short search never ends slower than it), then the macro space's."""
        try:
            derivation = default_lowering(self.program, self.sizes, self.vector_width)
        except LiftError:
            derivation = None
        if derivation is not None:
            yield derivation.replay(self.program, self.engine), derivation, {DEFAULT_LOWERING: "yes"}
        yield from self.stencil_row_variants()
        yield from macro_derivations(self.program, self.sizes, self.vector_width, self.local_mem_bytes)
        if any(self.folds_rows(ctx) for ctx in walk(infer(self.program).expr, self.engine.choices)
               if _is_call_of(ctx.node, P.Map) and not inside()(ctx)):
            yield from self.row_variants()
        yield from self.unrolled_window_variant()
        yield from self.checked_copy_variants()

    def unrolled_window_variant(self) -> Iterator[tuple]:
        """The default lowering with every stencil window's fold unrolled, up to `MAX_WINDOW` elements (the default
        folds a 1-D window of more than `MAX_UNROLLED_WINDOW` in a loop, which builds in a fraction of the time;
        unrolled may run faster); none where no window is that long."""
        if not any(isinstance(n, P.Slide) and n.size > MAX_UNROLLED_WINDOW for n in self.program.subterms()):
            return
        try:
            derivation = default_lowering(self.program, self.sizes, self.vector_width, unrolled_window=MAX_WINDOW)
        except LiftError:
            return
        yield derivation.replay(self.program, self.engine), derivation, {"window-folds": "unrolled"}

    def checked_copy_variants(self) -> Iterator[tuple]:
        """The default lowering with the folds of every stencil's vectors at the grid's edges, which check each
        read, unrolled, then rolled (`map-seq-unswitch(f, rolled)`; the one of the two that the default lowering
        chooses, `MAX_UNROLLED_CHECKS`, is not measured again); none where no window is slid."""
        if not any(isinstance(n, P.Slide) for n in self.program.subterms()):
            return
        for form in ("unrolled", "rolled"):
            try:
                derivation = default_lowering(self.program, self.sizes, self.vector_width, checked_copies=form)
            except LiftError:
                continue
            yield derivation.replay(self.program, self.engine), derivation, {"checked-copies": form}

    def stencil_row_variants(self) -> Iterator[tuple]:
        """At the first 2-D stencil's map over rows of windows outside every map (`grid_windows`), each of
        `EARLY_ROW_BLOCKS` (`lift.rules.stencil_row_blocking`) and of `EARLY_COLUMN_STRIPS`
        (`lift.rules.column_strips`), the rest lowered: measured first, so that a short search (a few candidates
        on a loaded machine) has them, as it has the default lowering's."""
        expr = infer(self.program).expr
        place = next((ctx for ctx in walk(expr, self.engine.choices)
                      if grid_windows(ctx) and not inside()(ctx) and P.is_high_level(ctx.node.f)), None)
        if place is None:
            return
        rows, cols = self.length(place.node.args[0].t) or 0, self.length(place.node.args[0].t.elem) or 0
        blocks = {(o["rows"], o["block"], o["width"]): (o, strategy) for _, o, strategy in row_block_moves(rows, cols)}
        strips = {(o["width"], o["rows"]): (o, strategy) for _, o, strategy in column_strip_moves(rows, cols)}
        early = [("stencil-row-blocks", blocks.get(key)) for key in EARLY_ROW_BLOCKS]
        early += [("column-strips", strips.get(key)) for key in EARLY_COLUMN_STRIPS]
        for name, move in early:
            if move is None:
                continue
            params, strategy = move
            focus = self.apply(Focus(self.program, self.engine).to(place), strategy)
            focus = focus and self.apply(focus.back_to(""), lower_rest >> clean_up >> composed_userfuns
                                                   >> unrolled_userfuns >> fused_sincos)
            if focus is not None:
                yield focus.program, focus.derivation(), {name: ", ".join(f"{k}={v}" for k, v in params.items())}

    def row_variants(self) -> Iterator[tuple]:
        """The default lowering with its reductions inside maps of each of `ROW_LANES` lanes and its maps of
        them in blocks of each of `ROW_BLOCKS` rows (or none): the two parameters it fixes for row reductions."""
        for lanes in ROW_LANES:
            for rows in (1,) + ROW_BLOCKS:
                if (lanes, rows) == (DEFAULT_ROW_LANES, ROW_BLOCK):
                    continue
                try:
                    derivation = default_lowering(self.program, self.sizes, self.vector_width, lanes, rows)
                except LiftError:
                    continue
                yield (derivation.replay(self.program, self.engine), derivation,
                       {"row-reductions": f"lanes={lanes}, rows={rows}"})

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
        """One derivation: a result that is a view of the inputs copied, iterations outside every map unrolled,
        maps of user functions of arrays applying them to a named element, computations a map does without its
        element let-bound before it (as the default lowering does), the folds off the spine of a map's function
        that read a component of its element mapped on their own or not (a decision of the bandit, where any is:
        `map-subterm-fission`), a list of indices walked by rows or as the columns of a copy of its transposition
        (a decision, where one is: `lift.rules.index_columns`), the one-element arrays of user functions in row
        reductions taken as their element or not (a decision, where any is: `scalar-argument`, so that the rows'
        lanes, and a tail, `reduce-tail`, are moves), moves at reductions and outermost maps, then
        lowering and clean-up, the user functions' loops of constant trip count unrolled or not (a decision of
        the bandit, where any is: `userfun-loop-unroll`), and their sines and cosines of one angle fused
        (`userfun-sincos`)."""
        focus, choices = Focus(self.program, self.engine), []
        focus = self.apply(focus, copied_view >> unrolled_iterations >> named_elements
                           >> hoist_invariants(self.sizes)) or focus
        split = self.apply(focus, folds_split_off(column_reduction | reduces_rows(self.sizes)))
        focus = self.either("fission", ("whole", "split"), focus, split, choices)
        focus = self.either("index-rows", ("rows", "columns"), focus, self.apply(focus, index_columns), choices)
        focus = self.either("scalar-arguments", ("arrays", "scalars"), focus,
                            self.apply(focus, scalar_arguments(self.sizes)), choices)
        for _ in range(16):
            point = self.next_point(focus.program)
            if point is None:
                break
            place, decision, moves = point
            options = [(name, tuple(sorted(params.items()))) for name, params, _ in moves]
            live = [i for i, o in enumerate(options) if (decision, o) not in self.failed_moves] or [0]
            families = list(dict.fromkeys(options[i][0] for i in live))
            family = families[self.bandit.choose(decision, families)]
            variants = [i for i in live if options[i][0] == family]
            pick = variants[self.bandit.choose(f"{decision}/{family}", [options[i] for i in variants])]
            choices.append((decision, family))
            applied = self.apply(focus.to(place), moves[pick][2])
            if applied is None:
                self.failed_moves.add((decision, options[pick]))
                if pick == 0:
                    return None
                applied = self.apply(focus.to(place), moves[0][2])
                if applied is None:
                    return None
                pick = 0
                choices[-1] = (decision, options[0][0])
            focus = applied.back_to("")
            choices.append((f"{decision}/{options[pick][0]}", options[pick]))
        focus = self.apply(focus, lower_rest >> clean_up >> private_folds >> composed_userfuns)
        if focus is None:
            return None
        focus = self.either("userfun-unroll", ("rolled", "unrolled"), focus, self.apply(focus, unrolled_userfuns),
                            choices)
        focus = self.apply(focus, fused_sincos) or focus
        return focus.program, focus.derivation(), tuple(choices)

    def either(self, decision: str, options: tuple, focus: Focus, changed: Optional[Focus], choices: list) -> Focus:
        """The bandit's choice, named `decision`, between `focus` and `changed` (`options` names the two), recorded
        in `choices`; `focus` where `changed` is None (its strategy failed) or the same program."""
        if changed is None or changed.program == focus.program:
            return focus
        family = options[self.bandit.choose(decision, list(options))]
        choices += [(decision, family), (f"{decision}/{family}", (family, ()))]
        return changed if family == options[1] else focus

    @staticmethod
    def apply(focus: Focus, move) -> Optional[Focus]:
        """`move` applied at the focus, or None where it does not apply."""
        try:
            return move(focus)
        except LiftError:
            return None

    def next_point(self, program: Lambda):
        """The first column reduction outside every map (`map(reduce) ∘ transpose`) or high-level reduction (of
        a map, or of an array: `reduce-map-id` gives it one), else the first high-level map outside every map
        (a map of a view is a view, not one): its place, the decision's name and its moves."""
        maps = None
        for ctx in walk(infer(program).expr, self.engine.choices):
            node = ctx.node
            if not isinstance(node, FunCall):
                continue
            in_pattern = inside()(ctx)
            if not in_pattern and column_reduction(ctx) and P.is_high_level(node.f):
                rows, cols = self.length(node.args[0].args[0].t), self.length(node.args[0].t)
                if rows is not None and cols is not None:
                    return ctx, f"columns@{ctx.path}", column_moves(rows, cols)
            grid = None if in_pattern or not P.is_high_level(node.f) else node if grid_windows(ctx) else \
                batched_grid(ctx)
            if grid is not None:
                rows, cols = self.length(grid.args[0].t), self.length(grid.args[0].t.elem)
                if rows is not None and cols is not None:
                    moves = grid_moves(rows, cols)
                    return (ctx, f"grid@{ctx.path}", moves) if grid is node else \
                        (ctx, f"grids@{ctx.path}", batched_moves(moves))
            if windows(ctx) and P.is_high_level(node.f) and not inside(P.Fold)(ctx):
                length = self.length(node.args[0].t)
                if length is not None:
                    return ctx, f"map@{ctx.path}", window_moves(length, in_pattern)
            if isinstance(node.f, P.Reduce) and lane_reduction(ctx):
                continue
            if isinstance(node.f, P.Reduce) and not _is_call_of(node.args[0], P.Map):
                length = self.length(node.args[0].t)
                if length is not None:
                    scalars = isinstance(node.args[0].t.elem, ScalarType)
                    moves = array_reduction_moves(length, in_pattern, scalars)
                    return ctx, f"reduce@{ctx.path}", _from_neutral(node.f, moves)
            if isinstance(node.f, P.Reduce) and _is_call_of(node.args[0], P.Map):
                mapped_ = node.args[0]
                length = self.length(mapped_.t)
                if length is not None:
                    zipped = _is_call_of(mapped_.args[0], P.Zip)
                    scalars = _scalar_elements(mapped_) or (zipped and _scalar_result(mapped_))
                    moves = reduction_moves(length, in_pattern, scalars, zipped)
                    return ctx, f"reduce@{ctx.path}", _from_neutral(node.f, moves)
            if maps is None and isinstance(node.f, P.Map) and P.is_high_level(node.f) and not in_pattern:
                length = self.length(node.args[0].t)
                if length is not None:
                    maps = (ctx, f"map@{ctx.path}", OUTER_GLOBAL_MOVES if _has_global(ctx)
                            else transposition_moves(length) if transposition(ctx)
                            else map_moves(length, _scalar_elements(node), _scalar_tuples(node),
                                           self.folds_rows(ctx), self.takes_vectors_apart(ctx)))
        return maps

    def takes_vectors_apart(self, ctx) -> bool:
        """A map that `struct-of-arrays` rewrites: its function's vectors are taken apart by user functions."""
        return self.engine.first_params(ctx, self.engine.rule("struct-of-arrays")) is not None

    def folds_rows(self, ctx) -> bool:
        """A map whose function reduces `MIN_CHUNK` scalars at least (`reduces_rows`): rows to fold."""
        return reduces_rows(self.sizes)(ctx)

    def length(self, t) -> Optional[int]:
        try:
            return t.length.eval(self.sizes)
        except (AttributeError, LiftError):
            return None


def _from_neutral(r: P.Reduce, moves: tuple) -> tuple:
    """The moves at `reduce(f, z)` where `f(z, z) ≠ z` and `f` has a known neutral element `e`: each at the inner
    reduction of `reduce(f, z) ∘ reduce(f, e)` (`reduce-neutral-init`, `lift.rules.reduction`), which splits
    where the reduction from `z` does not; `moves` where no such `e` is known, or none is needed."""
    if absorbs_itself(r.f, r.init) or neutral_element(r.f, r.init.t) is None:
        return moves
    return tuple((name, dict(params, neutral_init=True), rewrite("reduce-neutral-init") >> argument(0, strategy))
                 for name, params, strategy in moves)


LANES_MAX = 16
"""A reduction over a constant length up to this is one of lanes (`reduce-lanes` leaves one of 4)."""


def _lane_reduction(ctx) -> bool:
    length = ctx.node.args[0].t.length
    return (length.is_constant and length.value <= LANES_MAX) or _in_work_item(ctx)


_in_work_item = inside((P.MapGlb, P.MapLcl, P.MapSeq, P.MapSeqSlide, P.ReduceSeq))
lane_reduction = Selector(_lane_reduction, "lane_reduction")
"""A reduction of a few lanes (a constant length up to `LANES_MAX`), or one already inside a work-item (in a
lowered map or sequential reduction): it gets no moves of its own, `lower_rest` makes it sequential (the only
move that would suit it) rather than the search spending decisions on it."""

OUTER_GLOBAL_MOVES = (("global", {"dim": 1}, rewrite("map-to-global", dim=1)),)
"""The move at a map whose function already has global work-items on dimension 0: dimension 1."""


def _has_global(ctx) -> bool:
    """A map whose function has global work-items (not one over an array that a kernel before it computes)."""
    return any(isinstance(c.node, P.MapGlb) for c in subtree(L.descend(ctx, "f")))


def _step_json(s: Rewrite) -> dict:
    return {"rule": s.rule, "at": s.location, "params": s.param_dict}


def _is_call_of(e, cls) -> bool:
    return isinstance(e, FunCall) and isinstance(e.f, cls)


def _scalar_elements(call: FunCall) -> bool:
    return isinstance(call.args[0].t.elem, ScalarType) and _scalar_result(call)


def _scalar_tuples(call: FunCall) -> bool:
    """A map of scalars giving tuples of scalars (BlackScholes' call and put)."""
    elem = call.t.elem
    return (isinstance(call.args[0].t.elem, ScalarType) and isinstance(elem, TupleType)
            and all(isinstance(t, ScalarType) for t in elem.elems))


def _scalar_result(call: FunCall) -> bool:
    return isinstance(call.t.elem, ScalarType)
