"""The search strategy role of `lift explore` (TVM meta_schedule's `SearchStrategy`): what proposes candidates.

The explore loop (`lift.explore.driver`) iterates a strategy for candidates, tells it each candidate's
measured time (`observe`, None for a failure) so that a learning search can steer, and, before it takes
any, the figures of the device they will run on (`use_device`) so that a model-driven search can rank
for it. `RewriteSearch` and `SequenceSearch` implement the protocol; a plain iterable of candidates (a
list, a generator) becomes a strategy through `as_strategy`, which is what the loop calls on its input;
`search_for` is the search `lift explore` runs on a program.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Mapping, Optional, Protocol, runtime_checkable

from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.sequence_search import SequenceSearch, is_program_of_calls
from lift.ir.nodes import Lambda


@runtime_checkable
class SearchStrategy(Protocol):
    """Proposes candidates (iterating it), hears their measured times, and learns the device beforehand."""

    def __iter__(self) -> Iterator[Candidate]:
        ...

    def observe(self, candidate: Candidate, time_ms: Optional[float]) -> None:
        """`candidate` ran in `time_ms` milliseconds (the best of its work-group sizes), or failed (None)."""

    def use_device(self, model: DeviceModel) -> None:
        """The candidates will run on the device `model` describes (called once, before any is taken)."""


class FixedCandidates:
    """A strategy over a given iterable of candidates, which learns nothing.

    Where the iterable has an `observe` or a `use_device` of its own (a list subclass that records what it
    hears, as the tests' searches do) they are passed on, so a partial strategy keeps working.
    """

    def __init__(self, candidates: Iterable[Candidate]):
        self.candidates = candidates
        self._observe = getattr(candidates, "observe", None)
        self._use_device = getattr(candidates, "use_device", None)

    def __iter__(self) -> Iterator[Candidate]:
        return iter(self.candidates)

    def observe(self, candidate: Candidate, time_ms: Optional[float]) -> None:
        if self._observe is not None:
            self._observe(candidate, time_ms)

    def use_device(self, model: DeviceModel) -> None:
        if self._use_device is not None:
            self._use_device(model)


def as_strategy(candidates: Iterable[Candidate]) -> SearchStrategy:
    """`candidates` itself when it is a `SearchStrategy`, else `FixedCandidates` over it."""
    return candidates if isinstance(candidates, SearchStrategy) else FixedCandidates(candidates)


def search_for(program: Lambda, sizes: Mapping[str, int], seed: int = 0) -> SearchStrategy:
    """The search of `program`'s lowerings at `sizes`: its kernel partitions where it is a program of calls
    (`SequenceSearch`), else its rewrites (`RewriteSearch`, seeded by `seed`)."""
    return SequenceSearch(program, sizes) if is_program_of_calls(program) else RewriteSearch(program, sizes, seed)
