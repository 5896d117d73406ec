"""The rewrite search: candidate lowerings of a high-level program, derived by the rules, chosen by a bandit.

A candidate is a derivation: every step is a rule of `lift.rules`, so every candidate means what the
program means. The search builds one in three stages, as the issue describes:

(a) algorithmic moves at each reduction and each outermost map: strategies built from the paper's own
    derivations (`lift.rules.paper_derivations`), applied at that place: Figure 8's chunked, fused
    sequential reduction; Figure 9(c)'s float4 lanes; Figure 9(a)'s local-memory tree; Figure 2's split
    map, with or without vectors; and where selectors find their shapes, the macro rules of
    `lift.rules.column_sums`: a bare reduction given its map (`reduce-map-id`), column reductions as partial
    column sums folded row by row, stencil windows in blocks of results folding shifted rows of the grid (in
    2-D too), transpositions in tiles;
(b) lowering what is left (`lower_rest`: a map outside every map runs on global work-items, any other map
    and every reduction sequentially, reorders keep their order), then cleaning up with the fusion and
    identity rules until none applies (`clean_up`), and the loops of constant trip count in user functions
    unrolled or not (`userfun-loop-unroll`, where it applies: unrolled, a window the loops index is registers);
(c) at each place, the kind of move and then its parameters (chunk sizes, work-items per group, vector
    width), each drawn by a UCB1 bandit whose reward is the measured throughput relative to the best so
    far (`observe`); untried options come first.

Before these come the default lowering's candidate (`lift.rules.default_lowering`: what `lift.compile` runs
without a tuned winner, so that a short search never ends slower than it) and those of the macro-rule space
(`lift.explore.macro_space`: register blocking, interchange and 2-D thread mappings wherever the macro rules
match, as for matrix multiply). Each distinct program (up to parameter names) is proposed once.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Mapping, Optional

from lift.errors import LiftError
from lift.explore.candidate import DEFAULT_LOWERING, Candidate
from lift.explore.cost_model import DeviceModel
from lift.explore.macro_space import macro_derivations
from lift.ir import patterns as P
from lift.ir.associativity import absorbs_itself, neutral_element
from lift.ir.nodes import FunCall, Lambda
from lift.ir.typecheck import infer
from lift.rules import Rewrite, RewriteEngine, canonical
from lift.rules import location as L
from lift.rules.location import subtree, walk
from lift.rules.block_choice import row_padding
from lift.rules.column_sums import (blocked_columns, blocked_grid, blocked_windows, column_reduction, folded_grid,
                                   folded_window_rows, grid_windows, partial_column_sums, private_folds,
                                   transpose_tiles, transposition, vector_grid, vector_windows, windows)
from lift.rules.default_lowering import (GROUP, ROW_BLOCK, ROW_LANES as DEFAULT_ROW_LANES, clean_up, copied_view,
                                        default_lowering, high_level, hoist_invariants, named_elements,
                                        unrolled_iterations, unrolled_userfuns)
from lift.rules.default_lowering import lower_rest as lower_high_level
from lift.rules.fold_splitting import folds_split_off
from lift.rules.index_columns import index_columns
from lift.rules.macro_rules import MAX_PADDING
from lift.rules.reduction_choice import LANES, pad_reduction, pad_results, reduces_rows
from lift.rules.row_blocking import row_blocks
from lift.rules.stencil_row_blocking import stencil_row_blocks
from lift.rules.struct_of_vectors import struct_of_vectors
from lift.rules.paper_derivations import (groups, local_tree_groups, mapped, sequential_chunks, vector_groups,
                                          vector_lane_chunks, vectorised_work_groups)
from lift.rules.strategy import Focus, Selector, argument, everywhere, inside, is_call, mapped_body, nowhere, rewrite
from lift.types.types import ScalarType, TupleType

lower_rest = lower_high_level >> nowhere(high_level)
"""Every high-level pattern left lowered (`lift.rules.default_lowering.lower_rest`); fails where one of them
cannot be lowered so."""

GLOBAL0 = rewrite("map-to-global", dim=0)


def _pow2s(lo: int, hi: int) -> list:
    return [1 << k for k in range(max(hi, 1).bit_length()) if lo <= (1 << k) <= hi]




# --- moves -------------------------------------------------------------------------------------------------


@lru_cache(maxsize=1024)
def reduction_moves(length: int, in_map: bool, scalars: bool, zipped: bool) -> tuple:
    """The moves at a reduction `reduce(f, z) ∘ map(g)` over `length` elements: `(name, params, strategy)`,
    each strategy applying at the reduction.

    `scalars`: the map's elements are scalars (so it may be vectorised); `zipped`: it maps over a zip.
    """
    moves = [("sequential", {}, argument(0, rewrite("map-to-seq")) >> rewrite("reduce-to-seq")
              >> rewrite("reduce-seq-map-seq-fusion"))]

    def add(name, params, k, strategy):
        if length % k:  # chunks of k need the input padded to a multiple of k (`lift.rules.padding`), outside
            # every map the map's results where its input cannot be (`pad-reduction-result`)
            padded = pad_reduction(k) if in_map else pad_reduction(k) | pad_results(k)
            params, strategy = dict(params, padded=True), padded >> strategy
        moves.append((name, params, strategy))

    for width in ROW_LANES if scalars and in_map else (4,) if scalars else ():
        if width == 4 or length % width == 0:
            add("vectorize", {"width": width}, width, argument(0, rewrite(
                "vectorize-zip-map" if zipped else "vectorize-map", n=width)) >> rewrite("reduce-lanes"))
    if in_map:
        return tuple(moves)
    finish = rewrite("reduce-to-seq")
    for c in _pow2s(64, length // 8):
        chunks = sequential_chunks(c)
        add("chunks-global", {"chunk": c}, c, chunks >> groups(rewrite("map-to-global", dim=0)) >> finish)
        add("chunks-workgroup", {"chunk": c}, c, chunks >> groups(rewrite("map-to-workgroup", dim=0)) >> finish)
    for g in _pow2s(1024, length // 8):
        for k in (1, 4, 16, 64):
            per_item = g // 4 // k
            if per_item < 16:
                continue
            lanes_ = vector_lane_chunks(g, per_item)
            items = mapped_body(argument(0, rewrite("map-to-local", dim=0)))
            add("lanes-workgroup", {"group": g, "items": k}, g,
                lanes_ >> vector_groups(rewrite("map-to-workgroup", dim=0) >> items) >> finish)
            add("lanes-global", {"group": g, "items": k}, g,
                lanes_ >> vector_groups(rewrite("map-to-global", dim=0)
                                        >> mapped_body(argument(0, rewrite("map-to-seq")))) >> finish)
    for g in _pow2s(4096, length // 4):
        for items in (32, 64, 128):
            if g // items < 2:
                continue
            add("local-tree", {"group": g, "items": items}, g,
                local_tree_groups(g, items, int(math.log2(items))) >> finish)
    return tuple(moves)


@lru_cache(maxsize=1024)
def array_reduction_moves(length: int, in_map: bool, scalars: bool) -> tuple:
    """The moves at a reduction of an array no map computes, `reduce(f, z)(x)` (`x / sum(x)`): those of
    `reduction_moves`, after `reduce-map-id` gives the reduction the map they start from."""
    return tuple((name, params, rewrite("reduce-map-id") >> strategy)
                 for name, params, strategy in reduction_moves(length, in_map, scalars, False))


@lru_cache(maxsize=1024)
def column_moves(rows: int, cols: int) -> tuple:
    """The moves at a column reduction `map(reduce(f, z))(transpose(A))` of a matrix of `rows` rows and `cols`
    columns: a global work-item per column, or per chunk of rows folded row by row into partial column sums,
    scalars or vectors, or per block of 8 to 64 columns folded row by row, the columns padded to a multiple of
    the block where it does not divide them and that adds at most `MAX_PADDING` (`lift.rules.column_sums`)."""
    moves = [("global", {}, rewrite("map-to-global", dim=0))]
    for chunk in _pow2s(4, rows // 2):
        if rows % chunk == 0:
            moves += [("partial-sums", {"chunk": chunk, "width": width or 1}, partial_column_sums(chunk, width))
                      for width in (None, 4, 8)]
    moves += [("blocked-columns", {"block": w, "padded": cols % w != 0}, blocked_columns(w, cols % w != 0))
              for w in _pow2s(8, min(cols // 2, 64)) if -cols % w <= cols * MAX_PADDING]
    return tuple(moves)


@lru_cache(maxsize=1024)
def window_moves(length: int, in_map: bool) -> tuple:
    """The moves at a stencil's map over `length` windows: the map's moves (inside a map, sequential), each flat
    2-D window folded row by row (`lift.rules.column_sums.folded_window_rows`), blocks of results, each
    folding whole shifted rows of the grid (`lift.rules.column_sums.blocked_windows`), or blocks of windows
    computed a vector of windows at a time (`lift.rules.column_sums.vector_windows`; over the windows padded to a
    multiple of the block where it does not divide `length`), one global work-item per block (inside a map, one
    after the other)."""
    rows = (("folded-rows", {}, folded_window_rows >> (rewrite("map-to-seq") if in_map else GLOBAL0)),)
    if in_map:
        seq = rewrite("map-to-seq")
        return ((("sequential", {}, seq),) + rows
                + _blocked(length, "blocked", lambda w, width: blocked_windows(w, width, seq))
                + _vectors(length, "vector-windows", lambda w, width, padded: vector_windows(w, width, seq, padded)))
    return (map_moves(length, False) + rows + _blocked(length, "blocked", blocked_windows)
            + _vectors(length, "vector-windows", lambda w, width, padded: vector_windows(w, width, padded=padded)))


@lru_cache(maxsize=1024)
def grid_moves(rows: int, cols: int) -> tuple:
    """The moves at a 2-D stencil's map over `rows` rows of `cols` windows: a global work-item per row (its windows
    then get `window_moves`), a work-item per output on two dimensions, each window folded row by row
    (`lift.rules.column_sums.folded_grid`), or the 2-D mapping of `lift.rules.column_sums.blocked_grid`: blocks
    of a row's results on global work-items of dimension 0, the rows on dimension 1, or its blocks of windows in
    vectors (`lift.rules.column_sums.vector_grid`, padded where the block does not divide `cols`), or blocks of
    `STENCIL_ROWS` rows whose columns of windows are vectorised so (`lift.rules.stencil_row_blocking`, padded where
    the blocks do not divide `rows`, `cols`)."""
    return ((("global", {}, GLOBAL0), ("folded-rows-2d", {}, folded_grid()))
            + _blocked(cols, "blocked-2d", blocked_grid) + _vectors(cols, "vector-windows-2d", vector_grid)
            + _row_blocks(rows, cols))


STENCIL_ROWS, STENCIL_ROW_COLUMNS = (2, 4, 8), (64, 256)
"""The rows per work-item of a 2-D stencil's row blocks, and the columns of a block (`grid_moves`)."""


EARLY_ROW_BLOCKS = ((2, 64, 16), (4, 256, 16))
"""The stencil row blocks `(rows, block, width)` measured right after the default lowering: the fastest of the
first measurements at 2048² on PoCL (2 cores, load 8-9: 3.2 and 3.0 ms best against the default's 3.6)."""


def _row_blocks(rows: int, cols: int) -> tuple:
    """`stencil_row_blocks(h, w, width)` for `STENCIL_ROWS` that divide `rows`, `STENCIL_ROW_COLUMNS` and vectors of
    8 or 16 lanes, the columns padded where `w` does not divide `cols` (up to the power of two at or above it).
    Rows padded to a multiple of `h` are not proposed: their results are written lane by lane under the padding's
    tests (jacobi2d 2001x1999 in blocks of 2 rows took 9.8 ms of CPU time, best of 15, against 5.8 ms a row per
    work-item)."""
    top = 1 << max(cols - 1, 1).bit_length()
    return tuple(("row-blocks-2d", {"rows": h, "block": w, "width": width, **({"padded": True} if cols % w else {})},
                  stencil_row_blocks(h, w, width, padded_columns=cols % w != 0))
                 for h in STENCIL_ROWS for w in STENCIL_ROW_COLUMNS for width in (8, 16)
                 if rows % h == 0 and rows >= 2 * h and w <= top)


def _blocked(length: int, name: str, strategy) -> tuple:
    """`strategy(w, width)` for blocks of `w` results (8 to 256, dividing `length`), scalars or `width` lanes."""
    return tuple((name, {"block": w, "width": width or 1}, strategy(w, width))
                 for w in _pow2s(8, min(length // 2, 256)) if length % w == 0
                 for width in (None, 4, 8, 16) if width is None or width <= w)


VECTOR_WINDOW_BLOCKS = (64, 256, 1024, 4096)
"""The windows per work-item of `vector-windows` besides one vector's: short blocks give the driver more work-items
to spread over its cores, long ones fewer to schedule."""


def _vectors(length: int, name: str, strategy) -> tuple:
    """`strategy(w, width, padded)` for blocks of `w` windows (one vector of `width`, or `VECTOR_WINDOW_BLOCKS`),
    `width` of 4, 8 or 16: blocks that do not divide `length` over its windows padded to a multiple of `w`
    (`padded`), up to the power of two at or above `length` (`pad-map`'s multiples)."""
    top = 1 << max(length - 1, 1).bit_length()
    return tuple((name, {"block": w, "width": width, **({"padded": True} if length % w else {})},
                  strategy(w, width, bool(length % w)))
                 for width in (4, 8, 16) for w in (width,) + VECTOR_WINDOW_BLOCKS if w <= top and w % width == 0)


@lru_cache(maxsize=1024)
def transposition_moves(length: int) -> tuple:
    """The moves at a transposition's map over `length` columns: the map's moves, or `b` rows of the result per
    global work-item in `b × b` tiles (`lift.rules.column_sums.transpose_tiles`; the rules check that `b`
    divides both dimensions)."""
    return map_moves(length, False) + tuple(("tiles", {"tile": b}, transpose_tiles(b))
                                            for b in (4, 8, 16, 32) if length % b == 0)


VECTOR_GLOBAL_WIDTHS = (4, 8, 16)
"""The lanes of a work-item of `vector-global`: a compute-bound user function (BlackScholes' math) runs its
`exp`, `log` and `sqrt` on `float8` or `float16` at once, as numba's `prange` loop does on AVX lanes."""


ROW_LANES = (4, 8, 16)
"""The lanes of a reduction inside a map (a row's): wider vectors are more independent additions in flight."""
ROW_BLOCKS = (2, 4, 8)
"""The rows a work-item of a map of row reductions folds at once (`lift.rules.row_blocking`)."""


@lru_cache(maxsize=1024)
def map_moves(length: int, vectorisable: bool, tuples: bool = False, folds_rows: bool = False,
              vectors: bool = False) -> tuple:
    """The moves at a map outside every map over `length` elements, each strategy applying at the map; where a
    chunk does not divide `length`, the map computes over its input padded to a multiple of the chunk and keeps
    the first `length` results (`pad-map`, `lift.rules.padding`). A map of elements (or of vectors of
    `VECTOR_GLOBAL_WIDTHS` lanes) directly on global work-items is also proposed padded so that `GROUP`
    work-items divide the global size: a prime one (scal at N = 16,777,213) leaves the driver work-groups of one
    work-item, some 40 times slower on PoCL. Each work-item's chunk may be a loop over float4s
    (`vector-chunks-global`): padded, it tests one guard per vector, where a padded loop over scalars tests one
    per element (3 times slower on PoCL). A map giving tuples of scalars (`tuples`) is vectorised on global
    work-items only (`vectorize-tuple-map`). A map of reductions of its rows (`folds_rows`) may fold `ROW_BLOCKS`
    rows per work-item at once (`row-blocks`, over its rows padded to a multiple of the block where it does not
    divide `length` and that adds at most `MAX_PADDING`: `lift.rules.block_choice.row_padding`). A map whose
    function takes vectors apart by user functions (`vectors`: N-body's bodies) may compute `VECTOR_GLOBAL_WIDTHS`
    elements per work-item, one in each lane of the vectors of their components (`struct-of-vectors`,
    `lift.rules.struct_of_vectors`; its lane arrays padded where the width does not divide `length`)."""
    moves = [("global", {}, rewrite("map-to-global", dim=0))]
    if folds_rows:
        moves += [("row-blocks", {"rows": h, **({"padded": True} if padded else {})}, row_blocks(h, padded))
                  for h in ROW_BLOCKS for padded in (row_padding(length, h),) if padded is not None]

    def add(name, params, k, strategy):
        if length % k:
            params, strategy = dict(params, padded=True), rewrite("pad-map", k=k) >> argument(0, strategy)
        moves.append((name, params, strategy))

    if length % GROUP:
        add("global", {}, GROUP, rewrite("map-to-global", dim=0))
    for width in VECTOR_GLOBAL_WIDTHS if vectorisable or tuples else ():
        vectorise = rewrite("vectorize-tuple-map", n=width) if tuples else rewrite("vectorize-map", n=width)
        on_global = everywhere(is_call(P.Map), rewrite("map-to-global", dim=0)) if tuples else \
            argument(0, rewrite("map-to-global", dim=0))
        add("vector-global", {"width": width}, width * GROUP, vectorise >> on_global)
    moves += [("struct-of-vectors", {"width": w, **({"padded": True} if length % w else {})},
               struct_of_vectors(w, bool(length % w))) for w in (VECTOR_GLOBAL_WIDTHS if vectors else ())]
    for n in _pow2s(16, length // 16):
        split = rewrite("split-join", n=n)
        add("chunks-global", {"chunk": n}, n, split >> argument(0, rewrite("map-to-global", dim=0)
                                                                >> mapped(rewrite("map-to-seq"))))
        if n <= 4096:
            add("workgroup", {"chunk": n}, n, split >> argument(0, rewrite("map-to-workgroup", dim=0)
                                                                >> mapped(rewrite("map-to-local", dim=0))))
        if vectorisable and n % 4 == 0 and n <= 16384:
            add("vector-workgroup", {"chunk": n, "width": 4}, n, vectorised_work_groups(n))
        if vectorisable and n % 4 == 0:
            add("vector-chunks-global", {"chunk": n, "width": 4}, n, split >> argument(0, rewrite(
                "map-to-global", dim=0) >> mapped(rewrite("vectorize-map", n=4))
                >> mapped_body(argument(0, rewrite("map-to-seq")))))
    return tuple(moves)


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

    def use_device(self, model: DeviceModel) -> None:
        """The bandit learns from measured times alone; the device's vector width picks the default lowering's
        vectors."""
        self.vector_width = model.vector_width

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
        yield from macro_derivations(self.program, self.sizes, self.vector_width)
        if any(self.folds_rows(ctx) for ctx in walk(infer(self.program).expr, self.engine.choices)
               if _is_call_of(ctx.node, P.Map) and not inside()(ctx)):
            yield from self.row_variants()

    def stencil_row_variants(self) -> Iterator[tuple]:
        """At the first 2-D stencil's map over rows of windows outside every map (`grid_windows`), each of
        `EARLY_ROW_BLOCKS` (`lift.rules.stencil_row_blocking`), the rest lowered: measured first, so that a short
        search (a few candidates on a loaded machine) has them, as it has the default lowering's."""
        expr = infer(self.program).expr
        place = next((ctx for ctx in walk(expr, self.engine.choices)
                      if grid_windows(ctx) and not inside()(ctx) and P.is_high_level(ctx.node.f)), None)
        if place is None:
            return
        moves = {(o["rows"], o["block"], o["width"]): (o, strategy) for _, o, strategy in _row_blocks(
            self.length(place.node.args[0].t) or 0, self.length(place.node.args[0].t.elem) or 0)}
        for key in EARLY_ROW_BLOCKS:
            if key not in moves:
                continue
            params, strategy = moves[key]
            focus = self.apply(Focus(self.program, self.engine).to(place), strategy)
            focus = focus and self.apply(focus.back_to(""), lower_rest >> clean_up >> unrolled_userfuns)
            if focus is not None:
                yield (focus.program, focus.derivation(),
                       {"stencil-row-blocks": ", ".join(f"{k}={v}" for k, v in params.items())})

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
        (a decision, where one is: `lift.rules.index_columns`), moves at reductions and outermost maps, then
        lowering and clean-up, and the user functions' loops of constant trip count unrolled or not (a decision of
        the bandit, where any is: `userfun-loop-unroll`)."""
        focus, choices = Focus(self.program, self.engine), []
        focus = self.apply(focus, copied_view >> unrolled_iterations >> named_elements
                           >> hoist_invariants(self.sizes)) or focus
        split = self.apply(focus, folds_split_off(column_reduction | reduces_rows(self.sizes)))
        focus = self.either("fission", ("whole", "split"), focus, split, choices)
        focus = self.either("index-rows", ("rows", "columns"), focus, self.apply(focus, index_columns), choices)
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
        focus = self.apply(focus, lower_rest >> clean_up >> private_folds)
        if focus is None:
            return None
        focus = self.either("userfun-unroll", ("rolled", "unrolled"), focus, self.apply(focus, unrolled_userfuns),
                            choices)
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
            if not in_pattern and grid_windows(ctx) and P.is_high_level(node.f):
                rows, cols = self.length(node.args[0].t), self.length(node.args[0].t.elem)
                if rows is not None and cols is not None:
                    return ctx, f"grid@{ctx.path}", grid_moves(rows, cols)
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
