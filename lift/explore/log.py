"""The explorer's log: one JSON line per evaluated candidate, written as soon as it is measured.

A record is keyed by the candidate's key, the device's label (with its driver version), the kernel,
the sizes and its role (a searched candidate, or the hand-written baseline), so that a re-run skips what was already measured on that device for that problem and
resumes. Each line is flushed and synced to disk before the next candidate starts: killing the explorer
loses at most the candidate in flight. A last line cut short by a kill is dropped when the log is
opened again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Mapping, Optional

from lift.explore.evaluation import OK

CANDIDATE, BASELINE = "candidate", "baseline"


@dataclass(frozen=True)
class Record:
    """One evaluation: what was run where, how it ended, and its times (ms) and throughput (GB/s)."""

    key: str
    device: str
    kernel: str
    sizes: Mapping[str, int]
    status: str
    reason: str = ""
    time_ms: Optional[float] = None
    q1_ms: Optional[float] = None
    q3_ms: Optional[float] = None
    runs: int = 0
    per_kernel_ms: tuple = ()
    gbps: Optional[float] = None
    predicted_ms: Optional[float] = None
    expression: str = ""
    derivation: tuple = ()
    params: Mapping = field(default_factory=dict)
    role: str = CANDIDATE
    recorded_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def identity(self) -> tuple:
        return identity(self.key, self.device, self.kernel, self.sizes, self.role)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), allow_nan=False, default=str)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        data = json.loads(line)
        data["per_kernel_ms"] = tuple(data.get("per_kernel_ms", ()))
        data["derivation"] = tuple(data.get("derivation", ()))
        return cls(**data)


def identity(key: str, device: str, kernel: str, sizes: Mapping[str, int], role: str) -> tuple:
    """What makes two evaluations the same: candidate, device, kernel, sizes and role."""
    return key, device, kernel, tuple(sorted(sizes.items())), role


class ResultLog:
    """The JSON-lines log at `path`: the records read at opening, and appending durably."""

    def __init__(self, path):
        self.path = Path(path)
        self.records: dict = {}
        if self.path.is_file():
            self._read()
        self._file = open(self.path, "a", encoding="utf-8")

    def _read(self) -> None:
        data = self.path.read_bytes()
        complete = data[:data.rfind(b"\n") + 1]
        if len(complete) != len(data):
            with open(self.path, "r+b") as f:
                f.truncate(len(complete))
        for line in complete.decode("utf-8", errors="replace").splitlines():
            try:
                record = Record.from_json(line)
            except (ValueError, TypeError):
                continue
            self.records[record.identity] = record

    def find(self, key: str, device: str, kernel: str, sizes: Mapping[str, int],
             role: str = CANDIDATE) -> Optional[Record]:
        return self.records.get(identity(key, device, kernel, sizes, role))

    def matching(self, device: str, kernel: str, sizes: Mapping[str, int]) -> list:
        """Every record of this device, kernel and sizes, in the order they were logged."""
        problem = (device, kernel, tuple(sorted(sizes.items())))
        return [r for i, r in self.records.items() if i[1:4] == problem]

    def append(self, record: Record) -> None:
        """Write `record` as one line and wait until it is on disk."""
        self._file.write(record.to_json() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.records[record.identity] = record

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "ResultLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
