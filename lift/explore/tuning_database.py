"""The tuning database: every candidate `lift explore` measured, in one store per user, found again by program.

Where the output folder's log (`lift.explore.log`) serves one search, this store serves every later one and
`lift.compile`: a record is kept under the program's structural hash (`program_key` of the high-level
program: the same program gives the same hash in any file, under any kernel or parameter names), with its
sizes, its device and driver (the device label), and the log's schema version. It lives in the user's cache
folder (`platformdirs.user_cache_dir("lift")/tuning`), or where `LIFT_TUNING_DB` says; `LIFT_TUNING_DB=off`
turns it off.

One JSON-lines file per program (`<hash>.jsonl`), each line a `Record` exactly as the log writes it, so the
log's checks read it (a bad line is skipped, never fatal). Appends take an exclusive `flock` on the file
for the length of one line, so several searches (different output folders, different devices) may write to
one program's file at once.

`best` answers `lift.compile`: the winner of the latest final round of `lift explore` (`lift.explore.final_round`)
while it stands, else the fastest working record of a program on a device at these sizes, else at
sizes of the same size class (each size within the same power of two), so that a winner tuned at
N = 2^24 serves N = 2^24 + 7 too, where its derivation applies. `export` writes a problem's records as a
kernel_tuner cache file, or as this store's JSON lines.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Iterator, Mapping, Optional

from lift.explore.candidate import program_key
from lift.explore.final_round import by_round, standing
from lift.explore.log import BASELINE, CANDIDATE, SCHEMA, BadRecord, Record
from lift.ir.nodes import Lambda

ENVIRONMENT = "LIFT_TUNING_DB"
OFF = "off"


def default_root() -> Optional[Path]:
    """The store's folder: `$LIFT_TUNING_DB`, else the user's cache folder; None where it is turned off."""
    configured = os.environ.get(ENVIRONMENT)
    if configured is not None:
        return None if configured.strip().lower() == OFF else Path(configured).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir("lift")) / "tuning"


def size_class(sizes: Mapping[str, int]) -> tuple:
    """The sizes' class: each size's power of two (`floor(log2 n)`), by name."""
    return tuple(sorted((name, int(n).bit_length()) for name, n in sizes.items()))


class TuningDatabase:
    """The records of every search, by program hash (module docstring); `root` None: `default_root()`."""

    def __init__(self, root=None):
        self.root = Path(root) if root is not None else default_root()

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def path(self, program: str) -> Path:
        return self.root / f"{program}.jsonl"

    def append(self, program: str, record: Record) -> None:
        """Add `record` to `program`'s file, durably and under the file's lock."""
        if not self.enabled:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path(program), os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, (record.to_json() + "\n").encode())
            os.fsync(fd)
        finally:
            os.close(fd)

    def records(self, program: str) -> Iterator[Record]:
        """`program`'s valid records, oldest first (a bad or cut-short line is skipped)."""
        if not self.enabled or not self.path(program).is_file():
            return
        for line in self.path(program).read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                yield Record.from_json(line)
            except BadRecord:
                continue

    def programs(self) -> list:
        """The hashes of the programs the store holds."""
        if not self.enabled or not self.root.is_dir():
            return []
        return sorted(p.stem for p in self.root.glob("*.jsonl"))

    def find(self, program: str, key: str, device: str, sizes: Mapping[str, int]) -> Optional[Record]:
        """The latest record of candidate `key` of `program` on `device` at `sizes`, or None."""
        found = None
        for r in self.records(program):
            if r.key == key and r.device == device and dict(r.sizes) == dict(sizes) and r.role == CANDIDATE:
                found = r
        return found

    def ranked(self, program: str, device: str, sizes: Mapping[str, int]) -> list:
        """The working candidates of `program` on `device` with a derivation, fastest first: those measured at
        `sizes` (the latest final round's first, while it stands, its winner first: it beat the others, the default
        lowering among them, side by side, or tied and was predicted faster: `by_round`), then those of the same
        size class."""
        latest = {}
        for r in self.records(program):
            if r.device == device and r.role == CANDIDATE:
                latest[(r.key, tuple(sorted(r.sizes.items())))] = r
        usable = [r for r in latest.values() if r.ok and r.derivation]
        exact = sorted((r for r in usable if dict(r.sizes) == dict(sizes)), key=lambda r: r.time_ms)
        compared = by_round(standing(exact, top=1))
        exact = compared + [r for r in exact if r not in compared]
        near = sorted((r for r in usable if dict(r.sizes) != dict(sizes) and size_class(r.sizes) == size_class(sizes)),
                      key=lambda r: r.time_ms / max(1, sum(r.sizes.values())))
        return exact + near

    def best(self, program: str, device: str, sizes: Mapping[str, int]) -> Optional[Record]:
        ranked = self.ranked(program, device, sizes)
        return ranked[0] if ranked else None

    def export(self, program: str, device: Optional[str] = None, sizes: Optional[Mapping[str, int]] = None,
               form: str = "jsonl") -> str:
        """`program`'s records (of `device` and `sizes` where given) as JSON lines, or as a kernel_tuner cache
        (`form="kernel_tuner"`, which needs one device and sizes: its cache file is per problem)."""
        chosen = [r for r in self.records(program) if (device is None or r.device == device)
                  and (sizes is None or dict(r.sizes) == dict(sizes))]
        if form == "jsonl":
            return "".join(r.to_json() + "\n" for r in chosen)
        if form == "kernel_tuner":
            return json.dumps(kernel_tuner_cache(chosen), indent=1)
        raise ValueError(f"unknown export form {form!r}: jsonl or kernel_tuner")


FAILED_CONFIG = "RuntimeFailedConfig"


def kernel_tuner_cache(records: list) -> dict:
    """`records` of one problem as a kernel_tuner cache file (its schema 1.0.0): the tunable parameters are
    the candidate's key and its parameters; a failed candidate's time is kernel_tuner's failure marker."""
    problems = {(r.device, r.kernel, tuple(sorted(r.sizes.items()))) for r in records}
    if len(problems) != 1:
        raise ValueError(f"a kernel_tuner cache holds one device, kernel and sizes; these records have "
                         f"{len(problems)} (give the device and sizes)")
    device, kernel, sizes = problems.pop()
    searched = [r for r in records if r.role != BASELINE]
    names = sorted({name for r in searched for name in r.params})
    keys = ["candidate", *names]
    values = {k: [] for k in keys}
    cache = {}
    for r in searched:
        point = {"candidate": r.key, **{n: r.params.get(n) for n in names}}
        for k in keys:
            if point[k] not in values[k]:
                values[k].append(point[k])
        cache[",".join(str(point[k]) for k in keys)] = {
            **point, "time": r.time_ms if r.ok else FAILED_CONFIG, "times": [],
            "compile_time": 0, "verification_time": 0, "benchmark_time": 0, "strategy_time": 0,
            "framework_time": 0, "timestamp": r.recorded_at, "GB/s": r.gbps if r.ok else FAILED_CONFIG,
        }
    return {"schema_version": "1.0.0", "device_name": device, "kernel_name": kernel,
            "problem_size": [n for _, n in sizes], "tune_params_keys": keys, "tune_params": values,
            "objective": "time", "cache": cache}


class SharedLog:
    """The explore loop's database (`lift.explore.database.Database`): the output folder's log, backed by the
    user's tuning database.

    Every record appended goes to both. A working candidate the log lacks but the store has (another folder's
    search of the same program on the same device, at the same sizes) stands as measured: it is copied into
    the log, not measured again. A failure is evaluated again: it may be the moment's, or that of the lift
    that measured it (a candidate the generator could not compile then may compile now).
    """

    def __init__(self, log, store: TuningDatabase, program: Lambda):
        self.log, self.store, self.program = log, store, program_key(program)
        self.reused = 0

    def settled(self, key: str, device: str, kernel: str, sizes: Mapping[str, int],
                role: str = CANDIDATE) -> Optional[Record]:
        record = self.log.settled(key, device, kernel, sizes, role)
        if record is not None or role != CANDIDATE or self.log.find(key, device, kernel, sizes, role) is not None:
            return record
        stored = self.store.find(self.program, key, device, sizes)
        if stored is None or not stored.ok:
            return None
        copied = Record.from_dict({**json.loads(stored.to_json()), "kernel": kernel, "schema": SCHEMA})
        self.log.append(copied)
        self.reused += 1
        return copied

    def append(self, record: Record) -> None:
        self.log.append(record)
        self.store.append(self.program, record)

    def matching(self, device: str, kernel: str, sizes: Mapping[str, int]) -> list:
        return self.log.matching(device, kernel, sizes)
