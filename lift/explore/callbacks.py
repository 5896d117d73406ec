"""The measure callbacks of `lift explore` (TVM meta_schedule's `MeasureCallback`): what reacts to results.

The explore loop (`lift.explore.driver._Search`) logs every evaluation, then calls each callback of its
list with the loop's counts and what was logged: the record and the candidate and generated code that
produced it (`Measured`). A callback is also called with `measured` None when only the counts changed
(a candidate skipped because the log has it). Keeping these out of the loop lets a caller add or drop
reactions (the winner's files, the progress line) without touching the search itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol, runtime_checkable

from lift.explore import report
from lift.explore.candidate import Candidate
from lift.explore.log import CANDIDATE, Record
from lift.explore.progress import ExploreProgress
from lift.ir.nodes import Lambda
from lift.opencl_gen.kernels import GeneratedProgram


@dataclass(frozen=True)
class Counts:
    """Where the loop stands: seconds since it started, evaluations (failed ones among them), skipped
    evaluations (the log had them) and the best working candidate so far (None: none yet)."""

    elapsed_s: float
    evaluated: int
    failed: int
    skipped: int
    best: Optional[Record]


@dataclass(frozen=True)
class Measured:
    """A logged record and what produced it; `new_best` says the record is the loop's new best candidate."""

    record: Record
    candidate: Candidate
    generated: Optional[GeneratedProgram]
    new_best: bool = False


@runtime_checkable
class MeasureCallback(Protocol):
    """Called after each logged record (`measured`), and with `measured` None when only the counts changed."""

    def __call__(self, counts: Counts, measured: Optional[Measured]) -> None:
        ...


class WriteWinner:
    """Writes a new best candidate's files at once (`report.write_winner`), so that a run stopped at any
    moment leaves its winner so far in the output folder."""

    def __init__(self, out_dir: Path, kernel: str, source: Lambda):
        self.out_dir, self.kernel, self.source = out_dir, kernel, source

    def __call__(self, counts: Counts, measured: Optional[Measured]) -> None:
        if measured is not None and measured.new_best and measured.record.role == CANDIDATE:
            report.write_winner(self.out_dir, self.kernel, measured.candidate, measured.generated, measured.record,
                                self.source)


class ShowProgress:
    """Refreshes the live progress line (`ExploreProgress`) with the counts."""

    def __init__(self, progress: ExploreProgress):
        self.progress = progress

    def __call__(self, counts: Counts, measured: Optional[Measured]) -> None:
        self.progress.update(counts.elapsed_s, counts.evaluated, counts.failed, counts.skipped,
                             None if counts.best is None else counts.best.gbps)
