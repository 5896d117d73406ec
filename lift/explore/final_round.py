"""The final round of `lift explore`: the fastest candidates timed again side by side, and the winner chosen.

In the search each candidate is timed once, minutes apart from the others; on a shared machine the top
candidates are often within the load's noise (jacobi2d: 3.45 against 3.50 ms), so the fastest in-search
time may name a clearly weaker variant. The final round takes the `top` fastest distinct candidates (by
their latest times), the default lowering's among them always (`participants`), and evaluates them `rounds`
times round-robin on the search's device worker, each evaluation timed adaptively as in the search
(`TimingPolicy`); each candidate's median evaluation (by its median time) is logged, marked with the round's
id (`Record.final`), and the fastest of these medians wins: its files are written to the output folder. The
default lowering is what `lift.compile` runs without a winner, so it takes the last place when it is not among
the fastest: a winner is crowned only by beating it in the same interleaved rounds. Without it, a round of two
run under a heavier load than the search (correlation: 7.6 and 8.1 ms in the search, 22 and 15 ms in the round)
crowned a candidate slower than the default lowering's 9.0 ms.

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

import math
import statistics
import time
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional, Sequence

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


def leader(records: Sequence[Record], samples: dict) -> Record:
    """The record among `records` (fastest first) of the candidate whose median over the rounds that every
    candidate of `samples` (key: its evaluations so far) completed is the fastest: a round cut short still
    compares its candidates side by side; the fastest of `records` where no round completed."""
    done = min(len(s) for s in samples.values())
    medians = {key: median_outcome(s[:done]) for key, s in samples.items()} if done else {}
    timed = {key: o.timing.median_ms for key, o in medians.items() if o is not None}
    if not timed:
        return records[0]
    key = min(timed, key=timed.get)
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
        search.crown(min(stage, key=lambda r: r.time_ms))
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
    finalists = []
    for item in best:
        outcome = median_outcome(samples[item.candidate.key])
        if outcome is not None:
            finalists.append(search.record_final(item, outcome, mark))
    search.remeasured = {r.key for r in finalists}
    search.crown(min(finalists, key=lambda r: r.time_ms) if finalists else records[0])
    return True
