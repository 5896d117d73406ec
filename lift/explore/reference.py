"""The reference output `lift explore` checks candidates against, and the size it checks them at.

The reference comes from the interpreter on the high-level program, and its time counts in the search's
budget. When computing it at the explored size would take more than `limit_s`, candidates are checked on
a smaller size of the same program instead (every size variable halved as often as needed) and timed at
the explored size: `ReferenceChoice.note` says so (`verified at N=8192 (reference at N=16384 would take
~40 s)`). The interpreter's time at the explored size is estimated from a timed run (the probe) on a size
with about `1/PROBE_RATIO` of its work (`lift.ir.work`; at most 10% more, for lower-order terms), scaled
by the ratio of the works; when the smaller size is the probe's, the probe's output is the reference.

`SmallerCheck` checks each candidate once at the smaller size on a device worker of its own, before the
explorer times it at the explored size.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping, Optional

from lift.errors import LiftError
from lift.explore.candidate import Candidate
from lift.explore.evaluation import GENERATE, Outcome, TimingPolicy
from lift.explore.worker import DEVICE, Worker, evaluate
from lift.ir.interpreter import interpret
from lift.ir.nodes import Lambda
from lift.ir.typecheck import infer
from lift.ir.work import work
from lift.opencl_gen.fp_contract import with_fp_contract
from lift.opencl_gen.runner import make_plan

# The reference may take this share of the budget at the explored size (at least REFERENCE_MIN_S).
REFERENCE_SHARE = 0.1
REFERENCE_MIN_S = 2.0
PROBE_RATIO = 16
# A check at the smaller size runs the kernels twice: once to compare, once more because timing needs two.
CHECK_TIMING = TimingPolicy(min_runs=2, max_runs=2, max_s=0.0)
_clock = time.perf_counter


def reference_limit(budget_s: float) -> float:
    """How long the reference may take at the explored size within a search of `budget_s` seconds."""
    return max(REFERENCE_MIN_S, REFERENCE_SHARE * budget_s)


@dataclass(frozen=True)
class ReferenceChoice:
    """The reference output, the sizes it was computed at with the inputs there, and, when those are smaller
    than the explored `explored` sizes, the estimated time of the reference there (`estimate_s`)."""

    sizes: Mapping[str, int]
    inputs: list
    output: object
    explored: Mapping[str, int]
    estimate_s: Optional[float] = None

    @property
    def smaller(self) -> bool:
        return dict(self.sizes) != dict(self.explored)

    def note(self) -> Optional[str]:
        """`verified at N=512 (reference at N=16384 would take ~40 s)`, or None at the explored size."""
        if not self.smaller:
            return None
        return f"verified at {_sizes_text(self.sizes)} (reference at {_sizes_text(self.explored)} would take " \
               f"~{self.estimate_s:.3g} s)"


def choose_reference(program: Lambda, inputs_at: Callable[[Mapping[str, int]], list], sizes: Mapping[str, int],
                     limit_s: float) -> ReferenceChoice:
    """The reference output of `program` at `sizes`, or at smaller sizes when it would take more than
    `limit_s` there; `inputs_at(sizes)` gives the program's inputs at any sizes (see the module docstring)."""
    sizes = dict(sizes)
    if math.isinf(limit_s):
        return _computed(program, inputs_at, sizes, sizes)
    levels = _smaller_sizes(program, sizes)
    full_work = work(program, sizes)
    at = next((i for i, s in enumerate(levels) if work(program, s) * PROBE_RATIO <= 1.1 * full_work), None)
    if at is None:
        return _computed(program, inputs_at, sizes, sizes)
    probe, warm_up = levels[at], levels[min(at + 2, len(levels) - 1)]
    try:  # the first run translates the user functions to numpy
        interpret(program, *inputs_at(warm_up), sizes=warm_up)
    except LiftError:
        pass
    try:
        probe_inputs = inputs_at(probe)
        start = _clock()
        probe_output = interpret(program, *probe_inputs, sizes=probe)
    except LiftError:  # inputs or constraints that a smaller size does not meet
        return _computed(program, inputs_at, sizes, sizes)
    per_work = (_clock() - start) / max(work(program, probe), 1.0)
    estimate_s = per_work * full_work
    if estimate_s <= limit_s:
        return _computed(program, inputs_at, sizes, sizes)
    chosen = next(s for s in levels if per_work * work(program, s) <= limit_s / 2 or s == probe)
    if chosen == probe:
        return ReferenceChoice(probe, probe_inputs, probe_output, sizes, estimate_s)
    return _computed(program, inputs_at, chosen, sizes, estimate_s)


def _computed(program, inputs_at, sizes, explored, estimate_s=None) -> ReferenceChoice:
    inputs = inputs_at(sizes)
    return ReferenceChoice(sizes, inputs, interpret(program, *inputs, sizes=sizes), explored, estimate_s)


CHECK_ALIGNMENT = 64
"""The largest power of two whose divisibility the smaller sizes keep: a candidate chunked to the explored sizes
(blocks of 64 windows of a 192³ grid) must generate at the sizes it is checked at (64³, where halving gave 96³)."""


def _smaller_sizes(program: Lambda, sizes: dict) -> list:
    """`sizes` with every size variable halved once, twice, ..., each rounded down to a multiple of the power of two
    (up to `CHECK_ALIGNMENT`) that divides it, while they stay positive and meet the program's constraints; largest
    first."""
    typed = infer(program)
    align = {k: math.gcd(v, CHECK_ALIGNMENT) for k, v in sizes.items()}
    levels, current = [], sizes
    while True:
        smaller = {k: v // 2 // align[k] * align[k] for k, v in current.items()}
        if not smaller or min(smaller.values()) < 1:
            return levels
        try:
            typed.check_sizes(smaller)
        except LiftError:
            return levels
        levels.append(smaller)
        current = smaller


def _sizes_text(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{k}={v}" for k, v in sizes.items())


class SmallerCheck:
    """Checks candidates at the smaller sizes of a `ReferenceChoice` on a device worker of its own (started
    on the first check, with the inputs and reference in `data`; or on `worker`, which serves them), once per
    program: the work-group sizes a candidate is timed at are one program."""

    def __init__(self, kernel: str, sizes: Mapping[str, int], data: Path, device: Optional[str],
                 fp_contract: bool = True, worker: Optional[Worker] = None):
        self.kernel, self.sizes, self.fp_contract = kernel, dict(sizes), fp_contract
        self.worker = worker or Worker(DEVICE, device, data, CHECK_TIMING)
        self.outcomes: dict = {}

    def failure(self, candidate: Candidate, timeout_s: float) -> Optional[Outcome]:
        """Why `candidate` fails at the smaller sizes (its outcome there, the sizes named), or None."""
        program = candidate.with_local_size(None)
        if program.key not in self.outcomes:
            self.outcomes[program.key] = self._check(program, timeout_s)
        return self.outcomes[program.key]

    def _check(self, candidate: Candidate, timeout_s: float) -> Optional[Outcome]:
        at = _sizes_text(self.sizes)
        try:
            plan = make_plan(with_fp_contract(candidate.generate(self.kernel, self.sizes), self.fp_contract), self.sizes)
        except LiftError as e:
            return Outcome(GENERATE, f"cannot be checked at {at}: {e}")
        outcome = evaluate(self.worker, plan, timeout_s)
        if outcome.ok:
            return None
        return Outcome(outcome.status, f"at {at}: {outcome.reason}")

    def __enter__(self) -> "SmallerCheck":
        return self

    def __exit__(self, *exc) -> None:
        self.worker.stop()
