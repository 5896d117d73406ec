"""The database role of `lift explore` (TVM meta_schedule's `Database`): the results measured so far.

The explore loop (`lift.explore.driver._Search`) asks the database which evaluations stand (`settled`: a
re-run skips them), appends each new record (`append`), and reads every record of a problem (`matching`)
to find the best so far and the final round's candidates. `lift.explore.log.ResultLog`, the JSON-lines
log of the output folder, is the database `explore` uses; another store only has to implement these three.
"""

from __future__ import annotations

from typing import Mapping, Optional, Protocol, runtime_checkable

from lift.explore.log import CANDIDATE, Record


@runtime_checkable
class Database(Protocol):
    """The records of evaluations, keyed by candidate key, device, kernel, sizes and role."""

    def settled(self, key: str, device: str, kernel: str, sizes: Mapping[str, int],
                role: str = CANDIDATE) -> Optional[Record]:
        """The logged evaluation that stands (a run skips it), or None when there is none or it is to be
        evaluated again."""

    def append(self, record: Record) -> None:
        """Store `record` durably before the loop goes on (a killed run loses at most the candidate in flight)."""

    def matching(self, device: str, kernel: str, sizes: Mapping[str, int]) -> list:
        """Every record of this device, kernel and sizes, in the order they were stored."""
