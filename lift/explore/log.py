"""The explorer's log, its tuning database: one JSON line per evaluated candidate, written as soon as it is measured.

A record is keyed by the candidate's key, the device's label (with its driver version), the kernel,
the sizes and its role (a searched candidate, or the hand-written baseline), so that a re-run skips what
was already measured on that device for that problem and resumes. Each line is flushed and synced to disk before the next candidate starts: killing the explorer
loses at most the candidate in flight.

Reading is defensive, since a log may be edited by hand, copied between machines or written by another
version of lift: every record carries the schema version it was written in (`SCHEMA`; a record without
one predates versioning and reads as version 1), and every field is checked for its type and range (a
time is finite and positive) before the record is used. A bad line (one cut short by a kill, one that is
not a record, one with a bad field) is skipped with one warning naming the line, never a crash.

Failures that can be the moment's rather than the candidate's (`TRANSIENT`: a timeout on a loaded
machine, a crashed worker, a failed launch) are evaluated again in later runs, up to `MAX_ATTEMPTS`
evaluations in all (a record counts its `attempts`); `retry_failed` evaluates every failure again once
per run. One explorer at a time writes a log: opening it takes the output folder's lock
(`lift.explore.lock`), and the log is never appended through a symlink out of its folder.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import asdict, dataclass, field, fields, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Mapping, Optional

from lift.explore.evaluation import CRASH, FAILURES, LAUNCH, OK, TIMEOUT
from lift.explore.lock import FolderLock
from lift.files import check_inside

CANDIDATE, BASELINE = "candidate", "baseline"
SCHEMA = 1
TRANSIENT = frozenset({TIMEOUT, CRASH, LAUNCH})
MAX_ATTEMPTS = 3


@dataclass(frozen=True)
class Record:
    """One evaluation: what was run where, how it ended, and its times (ms) and throughput (GB/s).

    `attempts` counts the evaluations that ended in failure and led to this record (1 for a first one);
    `final` is the id of the final round whose median the record is, "" for the search's own measurement
    (`lift.explore.final_round`), and `searched_ms` such a record's candidate's time in the search (None: not known),
    which the report shows beside the round's.
    """

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
    attempts: int = 1
    final: str = ""
    searched_ms: Optional[float] = None
    schema: int = SCHEMA

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def search_ms(self) -> Optional[float]:
        """The candidate's time in the search: a final round's record's `searched_ms`, another's own time."""
        return self.searched_ms if self.final else self.time_ms

    @property
    def identity(self) -> tuple:
        return identity(self.key, self.device, self.kernel, self.sizes, self.role)

    def to_json(self) -> str:
        return json.dumps(asdict(self), separators=(",", ":"), allow_nan=False, default=str)

    @classmethod
    def from_json(cls, line: str) -> "Record":
        """The record of one log line; a `BadRecord` says what is wrong with it."""
        try:
            data = json.loads(line)
        except ValueError as e:
            raise BadRecord(f"not JSON ({e})") from None
        return cls.from_dict(data)

    @classmethod
    def from_dict(cls, data) -> "Record":
        """The record of a parsed log line, every field checked (see `_CHECKS`)."""
        if not isinstance(data, dict):
            raise BadRecord(f"a record is a JSON object, got {type(data).__name__}")
        data = {"schema": 1, **data}
        if isinstance(data["schema"], int) and not isinstance(data["schema"], bool) and data["schema"] > SCHEMA:
            raise BadRecord(f"written by a newer lift (schema {data['schema']}; this one reads {SCHEMA})")
        unknown = sorted(set(data) - _NAMES)
        if unknown:
            raise BadRecord(f"unknown field {unknown[0]!r}")
        missing = [f.name for f in fields(cls) if f.name not in data and f.name in _REQUIRED]
        if missing:
            raise BadRecord(f"no {missing[0]!r}")
        for name, value in data.items():
            check, what = _CHECKS[name]
            if not check(value):
                raise BadRecord(f"{name} must be {what}, got {json.dumps(value)[:60]}")
        if data["status"] == OK and (data.get("time_ms") is None or data.get("gbps") is None):
            raise BadRecord("a working candidate's record needs time_ms and gbps")
        data["per_kernel_ms"] = tuple(data.get("per_kernel_ms", ()))
        data["derivation"] = tuple(data.get("derivation", ()))
        return cls(**data)


class BadRecord(ValueError):
    """A log line that is not a valid record."""


def _text(v) -> bool:
    return isinstance(v, str)


def _name(v) -> bool:
    return isinstance(v, str) and v != ""


def _count(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


def _number(v) -> bool:
    """A finite number: not NaN, not infinite, and no integer beyond the largest float (`math.isfinite` of one
    raises OverflowError)."""
    return isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) <= sys.float_info.max


def _finite_json(v) -> bool:
    """Whether `v` holds no NaN or infinity at any depth (a record is written with `allow_nan=False`)."""
    if isinstance(v, float):
        return math.isfinite(v)
    if isinstance(v, dict):
        return all(_finite_json(x) for x in v.values())
    if isinstance(v, list):
        return all(_finite_json(x) for x in v)
    return True


def _time(v) -> bool:
    return v is None or (_number(v) and v > 0)


def _sizes(v) -> bool:
    return isinstance(v, dict) and all(_name(k) and _count(n) and n > 0 for k, n in v.items())


_CHECKS = {
    "key": (_name, "a non-empty string"), "device": (_name, "a non-empty string"),
    "kernel": (lambda v: isinstance(v, str) and v.isidentifier(), "an identifier"),
    "sizes": (_sizes, "an object of size names to positive integers"),
    "status": (lambda v: isinstance(v, str) and (v == OK or v in FAILURES), f"one of {', '.join([OK, *FAILURES])}"),
    "reason": (_text, "a string"),
    "time_ms": (_time, "a finite positive number or null"), "q1_ms": (_time, "a finite positive number or null"),
    "q3_ms": (_time, "a finite positive number or null"), "gbps": (_time, "a finite positive number or null"),
    "predicted_ms": (lambda v: v is None or (_number(v) and v >= 0), "a finite number >= 0 or null"),
    "runs": (_count, "an integer >= 0"),
    "per_kernel_ms": (lambda v: isinstance(v, list) and all(_number(t) and t >= 0 for t in v),
                      "a list of finite numbers >= 0"),
    "expression": (_text, "a string"), "derivation": (lambda v: isinstance(v, list) and _finite_json(v), "a list of finite values"),
    "params": (lambda v: isinstance(v, dict) and _finite_json(v), "an object of finite values"),
    "role": (lambda v: v in (CANDIDATE, BASELINE), f"{CANDIDATE} or {BASELINE}"),
    "recorded_at": (_text, "a string"),
    "attempts": (lambda v: _count(v) and v >= 1, "an integer >= 1"),
    "final": (_text, "a string"), "searched_ms": (_time, "a finite positive number or null"),
    "schema": (lambda v: _count(v) and v >= 1, "an integer >= 1"),
}
_NAMES = frozenset(_CHECKS)
_REQUIRED = ("key", "device", "kernel", "sizes", "status")


def identity(key: str, device: str, kernel: str, sizes: Mapping[str, int], role: str) -> tuple:
    """What makes two evaluations the same: candidate, device, kernel, sizes and role."""
    return key, device, kernel, tuple(sorted(sizes.items())), role


def warn_on_stderr(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


class ResultLog:
    """The JSON-lines log at `path`: the valid records read at opening, and appending durably.

    Opening takes the lock of the log's folder for as long as the log is open (`FolderLockedError` if
    another explorer holds it). `warn` receives one message per line skipped (also kept in `warnings`).
    """

    def __init__(self, path, retry_failed: bool = False, warn: Callable[[str], None] = warn_on_stderr):
        self.path = Path(path)
        self.retry_failed = retry_failed
        self.records: dict = {}
        self.warnings: list = []
        self._warn = warn
        self._fresh: set = set()  # identities appended by this run, never retried in it
        self._lock = FolderLock(self.path.parent).acquire()
        try:
            check_inside(self.path, self.path.parent)
            if self.path.is_file():
                self._read()
            self._file = open(self.path, "a", encoding="utf-8")
        except BaseException:
            self._lock.release()
            raise

    def _skip(self, number: int, problem: str) -> None:
        message = f"{self.path}, line {number}: {problem}; skipped"
        self.warnings.append(message)
        self._warn(message)

    def _read(self) -> None:
        data = self.path.read_bytes()
        complete = data[:data.rfind(b"\n") + 1]
        lines = [line.decode("utf-8", errors="replace") for line in complete.split(b"\n")[:-1]]
        if len(complete) != len(data):
            with open(self.path, "r+b") as f:
                f.truncate(len(complete))
            self._skip(len(lines) + 1, "cut short (a run killed while writing it)")
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                record = Record.from_json(line)
            except BadRecord as e:
                self._skip(number, str(e))
                continue
            self.records[record.identity] = record

    def retries(self, record: Record) -> bool:
        """Whether a logged evaluation is to be done again: a failure not yet retried in this run that is
        transient and within `MAX_ATTEMPTS`, or any failure under `retry_failed`."""
        if record.ok or record.identity in self._fresh:
            return False
        return self.retry_failed or (record.status in TRANSIENT and record.attempts < MAX_ATTEMPTS)

    def find(self, key: str, device: str, kernel: str, sizes: Mapping[str, int],
             role: str = CANDIDATE) -> Optional[Record]:
        """The last logged evaluation, or None."""
        return self.records.get(identity(key, device, kernel, sizes, role))

    def settled(self, key: str, device: str, kernel: str, sizes: Mapping[str, int],
                role: str = CANDIDATE) -> Optional[Record]:
        """The logged evaluation that stands, or None when there is none or it is to be done again (`retries`):
        what a run skips."""
        record = self.find(key, device, kernel, sizes, role)
        return None if record is None or self.retries(record) else record

    def matching(self, device: str, kernel: str, sizes: Mapping[str, int]) -> list:
        """Every record of this device, kernel and sizes, in the order they were logged."""
        problem = (device, kernel, tuple(sorted(sizes.items())))
        return [r for i, r in self.records.items() if i[1:4] == problem]

    def append(self, record: Record) -> None:
        """Write `record` as one line and wait until it is on disk; a record that follows a logged failure of
        the same evaluation counts one attempt more."""
        earlier = self.records.get(record.identity)
        if earlier is not None and not earlier.ok:
            record = replace(record, attempts=earlier.attempts + 1)
        self._file.write(record.to_json() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())
        self.records[record.identity] = record
        self._fresh.add(record.identity)

    def close(self) -> None:
        self._file.close()
        self._lock.release()

    def __enter__(self) -> "ResultLog":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
