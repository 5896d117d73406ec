"""The final round of `lift explore`: the fastest candidates timed again side by side, and the winner chosen.

In the search each candidate is timed once, minutes apart from the others; on a shared machine the top
candidates are often within the load's noise (jacobi2d: 3.45 against 3.50 ms), so the fastest in-search
time may name a clearly weaker variant. The final round takes the `top` fastest distinct candidates (by
their latest times), the default lowering's among them always (`participants`), and evaluates them `rounds`
times round-robin on the search's device worker, each evaluation timed adaptively as in the search
(`TimingPolicy`); each candidate's median evaluation (by its median time) is logged, its quartiles those of the
rounds (`quartiles`), marked with the round's id (`Record.final`), and the fastest of these medians wins
(`by_round`), unless the round cannot tell them apart: its files are written to the output folder. The default
lowering is what `lift.compile` runs without a winner, so it takes the last place when it is not among the
fastest: a winner is crowned only by beating it in the same interleaved rounds, or by tying with it where the cost
model predicts it faster. Without it, a round of two run under a heavier load than the search (correlation: 7.6 and
8.1 ms in the search, 22 and 15 ms in the round) crowned a candidate slower than the default lowering's 9.0 ms.

A tie is a candidate whose rounds' interquartile range overlaps the fastest median's (`tie_break`): the rounds
themselves say the difference is within the noise of the moment, and the cost model, which no load sways, picks
among the tied candidates where it predicts one clearly faster (`MODEL_MARGIN`). On a 2-core machine whose other
core is busy, one work-item finds the one free core as fast as two work-items do: asum's search once crowned its
sequential reduction on one work-item, twice as slow as the parallel one on a quiet machine. A quiet machine's
rounds are tight and decide alone; at a load of 8, asum's three finalists' ranges overlapped (12.5-17.6 ms).

It is bounded: the search stops `share` of the budget early to leave the round its time, and the round runs
at most `top * rounds` evaluations, fewer candidates where an evaluation of the search took so long that
`rounds` of them all would not fit the time left (`fitting`; two at least). It is logged only once complete,
so a run killed in it (or cut short by the budget) loses no measurement of the search and runs it again when
resumed; cut short, it crowns the fastest of the rounds it completed (`leader`; cross_entropy's round at a load
of 8 had no time for its five). A resumed run, or a fresh folder whose candidates the tuning database holds
(`SharedLog` copies their records, the round's marks with them), runs no round when the latest one still
stands (`standing`): its winner is written again.
"""

from __future__ import annotations

import dataclasses
import math
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import numpy as np

from lift.errors import LiftError
from lift.explore.candidate import DEFAULT_LOWERING
from lift.explore.evaluation import Outcome
from lift.explore.log import CANDIDATE, Record
from lift.explore.worker import evaluate

if TYPE_CHECKING:
    from lift.explore.driver import _Search


@dataclass(frozen=True)
class FinalRound:
    """How the final round runs: the `top` fastest distinct candidates (fewer than 2: no round, the fastest
    wins), `rounds` round-robin evaluations of each, within `share` of the budget kept from the search."""

    top: int = 5
    rounds: int = 5
    share: float = 0.2

    def __post_init__(self):
        if not (isinstance(self.top, int) and self.top >= 0 and isinstance(self.rounds, int) and self.rounds >= 1
                and 0 <= self.share < 1):
            raise LiftError(f"the final round takes top >= 0 candidates, rounds >= 1 and a share of the budget in "
                            f"[0, 1), got top={self.top!r}, rounds={self.rounds!r}, share={self.share!r}")

    def reserve(self, budget_s: float) -> float:
        """The seconds of `budget_s` the search leaves to the final round."""
        return self.share * budget_s if self.top >= 2 else 0.0


def standing(records: Sequence[Record], top: int) -> list:
    """The records of the latest final round among `records` (working candidates of one problem) when it still
    stands: no candidate measured after it is faster than its slowest (than any, when it had fewer than `top`
    candidates). Else, and when there is none, []."""
    marked = [r for r in records if r.final]
    if not marked:
        return []
    latest = max(marked, key=lambda r: r.recorded_at).final
    stage = [r for r in marked if r.final == latest]
    at = max(r.recorded_at for r in stage)
    cutoff = max(r.time_ms for r in stage) if len(stage) >= top else math.inf
    newer = [r for r in records if r.final != latest and r.recorded_at > at and r.time_ms < cutoff]
    return [] if newer else stage


def fitting(top: int, rounds: int, left_s: float, evaluation_s: Optional[float]) -> int:
    """How many candidates the round takes: `top`, fewer where `rounds` evaluations of each, `evaluation_s`
    seconds apiece (None: unknown), would not fit in `left_s`; two at least (where `top` has them), or there
    is nothing to compare."""
    if not evaluation_s:
        return top
    return min(top, max(2, int(left_s / (rounds * evaluation_s))))


def participants(records: Sequence[Record], top: int) -> list:
    """The records the round times, of `records` (working candidates, fastest first): the first `top`, the
    default lowering's fastest record in the last place when it is not among them (and `top` is at least 2)."""
    chosen = list(records[:top])
    default = next((r for r in records if DEFAULT_LOWERING in r.params), None)
    if top >= 2 and default is not None and default not in chosen:
        chosen[-1] = default
    return chosen


def median_outcome(outcomes: Sequence[Outcome]) -> Optional[Outcome]:
    """The median of working evaluations by their median time (the upper one of an even count), or None."""
    ranked = sorted((o for o in outcomes if o.ok), key=lambda o: o.timing.median_ms)
    return ranked[len(ranked) // 2] if ranked else None


def quartiles(outcomes: Sequence[Outcome]) -> Optional[tuple]:
    """The lower quartile, median and upper quartile of the median times of working evaluations, the median
    `median_outcome`'s and the quartiles widened to a measured time (of two evaluations, both), or None."""
    times = sorted(o.timing.median_ms for o in outcomes if o.ok)
    if not times:
        return None
    return (float(np.percentile(times, 25, method="lower")), times[len(times) // 2],
            float(np.percentile(times, 75, method="higher")))


MODEL_MARGIN = 0.1
"""How much faster (a share of its time) the cost model must predict a tied candidate than the fastest median's for
it to win: the model's own small differences mean no more than the round's (asum's parallel candidates differ by
0.1%, its one work-item by 2x)."""


def tie_break(spreads: Mapping[str, tuple], predicted: Mapping[str, Optional[float]]) -> str:
    """The winner's key of a round whose candidates' times over the rounds are `spreads` (key: `quartiles`):
    the fastest median, or, among the candidates tied with it (their interquartile range overlaps its own: the
    round cannot tell them apart), the one `predicted` (the cost model's time, key: ms) says is fastest, where it
    says so by `MODEL_MARGIN`; the fastest median where a tied candidate has no prediction."""
    fastest = min(spreads, key=lambda k: spreads[k][1])
    tied = [k for k in spreads if spreads[k][0] <= spreads[fastest][2]]
    if any(predicted.get(k) is None for k in tied):
        return fastest
    chosen = min(tied, key=lambda k: (predicted[k], spreads[k][1]))
    return chosen if predicted[chosen] < (1 - MODEL_MARGIN) * predicted[fastest] else fastest


def by_round(stage: Sequence[Record]) -> list:
    """The records of one final round, its winner first (`tie_break` over their medians and the rounds'
    quartiles), the others fastest first."""
    ranked = sorted(stage, key=lambda r: r.time_ms)
    if not ranked:
        return ranked
    won = tie_break({r.key: (r.q1_ms or r.time_ms, r.time_ms, r.q3_ms or r.time_ms) for r in ranked},
                    {r.key: r.predicted_ms for r in ranked})
    return sorted(ranked, key=lambda r: r.key != won)


def leader(records: Sequence[Record], samples: dict) -> Record:
    """The record among `records` (fastest first) of the winner (`tie_break`) of the rounds that every candidate
    of `samples` (key: its evaluations so far) completed: a round cut short still compares its candidates side
    by side; the fastest of `records` where no round completed."""
    done = min(len(s) for s in samples.values())
    spreads = {key: quartiles(s[:done]) for key, s in samples.items()} if done else {}
    spreads = {key: q for key, q in spreads.items() if q is not None}
    if not spreads:
        return records[0]
    key = tie_break(spreads, {r.key: r.predicted_ms for r in records})
    return next(r for r in records if r.key == key)


def final_round(search: "_Search", options: FinalRound, end: float) -> bool:
    """Run `search`'s final round by `end` (`time.monotonic()`), or reuse the one that stands, and name the
    winner (`_Search.crown`); False when the budget cut the round short (nothing of it is logged, the `leader`
    of its complete rounds wins)."""
    problem = search.problem
    records = sorted((r for r in search.log.matching(search.device, problem.kernel, problem.sizes)
                      if r.role == CANDIDATE and r.ok and r.key in search.offered), key=lambda r: r.time_ms)
    stage = standing(records, options.top)
    if stage:
        search.remeasured = {r.key for r in stage}
        search.crown(by_round(stage)[0])
        return True
    spent = statistics.median(search.evaluation_s) if search.evaluation_s else None
    top = fitting(options.top, options.rounds, end - time.monotonic(), spent)
    best = [item for item in map(search.prepared, participants(records, top)) if item is not None]
    if len(best) < 2:
        if records:
            search.crown(records[0])
        return True
    samples = {item.candidate.key: [] for item in best}
    for _ in range(options.rounds):
        for item in best:
            left = end - time.monotonic()
            if left <= 0:
                search.crown(leader(records, samples))
                return False
            samples[item.candidate.key].append(evaluate(search.worker, item.plan, min(search.settings.timeout_s,
                                                                                       left)))
    mark = uuid.uuid4().hex[:12]
    searched = {r.key: r.search_ms for r in records}
    finalists = []
    for item in best:
        outcome = median_outcome(samples[item.candidate.key])
        if outcome is not None:
            q1, _, q3 = quartiles(samples[item.candidate.key])
            timing = dataclasses.replace(outcome.timing, q1_ms=q1, q3_ms=q3)
            finalists.append(search.record_final(item, dataclasses.replace(outcome, timing=timing), mark,
                                                 searched.get(item.candidate.key)))
    search.remeasured = {r.key for r in finalists}
    search.crown(by_round(finalists)[0] if finalists else records[0])
    return True
