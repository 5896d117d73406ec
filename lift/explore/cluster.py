"""Exploration across devices and hosts through Ray: `lift explore --cluster`.

Ray (the `cluster` extra: `pip install 'lift[cluster]'`) runs the work; this module places it and keeps
every device busy. The roles:

- Discovery: on every node of the cluster a task lists the OpenCL devices that the `--device` names select
  there (`runtime.select_device`, the names of a local search; no name: the node's default device). The
  devices with one label (platform, device and driver version) form a *group*: one search, one output folder
  (`OUT/<label>`), one winner, which all of them serve. Devices of different labels are searched at once.
- `DeviceActor`: one Ray actor per device per node, pinned to its node. It runs candidates in a device worker
  process of its own (`lift.explore.worker.Worker`), as a local search does, so that a crash or a hang costs
  that candidate only; Ray restarts the actor when its process dies (`MAX_RESTARTS`).
- `_Builds`: builds are Ray tasks on the node of the device that will run the candidate (they fill PyOpenCL's
  binary cache there), one per source and device: the source's content hash, the device and the node key them.
- `_Scheduler`: one loop in the driver. Each device holds up to `jobs + 1` candidates of its group's search
  (`_Search.evaluations`, which asks the strategy for more as they are taken): building, built, or running.
  Each result is recorded as it arrives (the group's log and the tuning database, keyed by device label as
  in a local search), which tells the strategy. When an actor stops answering (its node died), the candidates
  it held go back to the front of its group's queue, for another device or the restarted actor; a candidate
  given back `ATTEMPTS` times is recorded as a crash.

A killed driver resumes as a local search does: each group's folder holds its log, and the tuning database
has every record. The final round (`lift.explore.final_round`) runs on one device of each group, the groups in
parallel.
"""

from __future__ import annotations

import hashlib
import math
import re
import socket
import tempfile
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Optional, Sequence

from lift.errors import LiftDeviceError, LiftError
from lift.explore.builder import Prepared
from lift.explore.candidate import Candidate
from lift.explore.driver import ExploreError, ExploreOptions, ExploreResult, open_search, prepare
from lift.explore.evaluation import CRASH, TIMEOUT, Outcome, TimingPolicy
from lift.explore.lock import FolderLock
from lift.explore.log import ResultLog
from lift.explore.reference import CHECK_TIMING, SmallerCheck
from lift.explore.worker import (DEVICE, EVALUATE, START_TIMEOUT_S, DeviceFacts, Worker, WorkerDied, WorkerTimedOut,
                                 compile_source, isolated)
from lift.opencl_gen import runtime

MAX_RESTARTS = 3
ATTEMPTS = 3
DEVICES_LOST = "every device of the search was lost"
_PROBE_INTERVAL_S = 1.0


def explore_cluster(program_file, kernel: Optional[str], sizes: Optional[Mapping[str, int]],
                    search: Callable[[], Iterable[Candidate]], *, cluster: str, budget_s: float, out_dir,
                    devices: Sequence[Optional[str]] = (), **options) -> list[ExploreResult]:
    """Explore `kernel` of a program file on the devices of the Ray cluster at `cluster` that `devices` name.

    `cluster` is what `ray.init` takes: `auto` (the cluster this machine runs), `ray://HOST:PORT` (Ray Client)
    or a head's `HOST:PORT`; a process already connected to Ray uses that connection. `search` makes a
    fresh search strategy (one per group, each learning its own device). The `options` are those of `explore`
    (`ExploreOptions`; the progress line is not shown). One `ExploreResult` per device label, in the order of
    the labels; each group's folder `out_dir/<label>` is what a local search on that device would write.
    """
    deadline = time.monotonic() + budget_s
    settings = replace(ExploreOptions(**options), progress=False)
    ray = _ray()
    with _connected(ray, cluster), ExitStack() as stack:
        pf, problem = prepare(program_file, kernel, sizes, budget_s, settings)
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        stack.enter_context(FolderLock(out_dir))
        data = problem.save(out_dir / "inputs.npz").read_bytes()
        check_path = None if problem.check is None else problem.check.save(out_dir / "check_inputs.npz")
        check_data = None if check_path is None else check_path.read_bytes()
        found = _discover(ray, tuple(devices))
        builds = _Builds(ray)
        actor = ray.remote(DeviceActor)
        groups = []
        for label in sorted({label for _, _, label in found}):
            members = [_Device(actor.options(num_cpus=0, max_restarts=MAX_RESTARTS, max_task_retries=0,
                                             scheduling_strategy=_on(ray, node)).remote(index, data, check_data,
                                                                                        settings.timing),
                               node, index, label) for node, index, l in found if l == label]
            stack.callback(_stop, ray, members)
            folder = out_dir / _folder_name(label)
            folder.mkdir(exist_ok=True)
            log = stack.enter_context(ResultLog(folder / "log.jsonl", settings.retry_failed))
            check = None if check_path is None else \
                SmallerCheck(problem.kernel, problem.check.sizes, check_path, None, settings.fp_contract,
                             ActorWorker(ray, members[0].actor, check=True))
            opened = open_search(pf, problem, log, ActorWorker(ray, members[0].actor), _BuildsOn(builds, members[0]),
                                 check, search(), deadline, budget_s, folder, settings)
            groups.append(_Group(label, stack.enter_context(opened), members))
        _Scheduler(ray, groups, builds, settings.jobs, deadline - settings.final.reserve(budget_s)).run()
        with ThreadPoolExecutor(max_workers=len(groups)) as threads:
            stopped = list(threads.map(lambda group: _finish(ray, group), groups))
    return [replace(group.search.result(end, budget_s, settings.plot), requeued=group.requeued)
            for group, end in zip(groups, stopped)]


def _ray():
    try:
        import ray
    except ImportError as e:
        raise ExploreError(f"--cluster needs Ray ({e}): pip install 'lift[cluster]'") from None
    return ray


@contextmanager
def _connected(ray, address: str) -> Iterator[None]:
    """Connected to the Ray cluster at `address` for as long as the context lasts (an existing connection kept)."""
    if ray.is_initialized():
        yield
        return
    m = re.fullmatch(r"(?:ray://)?\[?([^\]]+?)\]?:(\d+)", address.strip())
    if m is not None and not listening(m.group(1), int(m.group(2))):
        raise ExploreError(f"cannot connect to the Ray cluster at {address!r}: nothing answers there "
                           "(start one with `ray start --head`)")
    try:
        ray.init(address=address, logging_level="ERROR", log_to_driver=False, configure_logging=False)
    except (ConnectionError, ValueError, RuntimeError) as e:
        raise ExploreError(f"cannot connect to the Ray cluster at {address!r}: {_first_line(e)}") from None
    try:
        yield
    finally:
        ray.shutdown()


def listening(host: str, port: int, timeout_s: float = 5.0) -> bool:
    """Whether something accepts connections at `host:port` (`ray.init` waits minutes for an address that does not)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _on(ray, node: str):
    """Ray's placement on `node` and nowhere else (a device is a node's)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return NodeAffinitySchedulingStrategy(node, soft=False)


def node_devices(specs: tuple) -> list:
    """(index, label) of each device of this node that `specs` name (each its device, as `runtime.select_device`
    picks it; no names: the default device), once each."""
    present = [runtime.select_device(f"#{i}") for i in range(len(runtime.devices()))]
    chosen = {}
    for spec in specs or (None,):
        try:
            device = runtime.select_device(spec)
        except LiftDeviceError:
            continue
        chosen.setdefault(present.index(device), runtime.device_label(device))
    return sorted(chosen.items())


def _discover(ray, specs: tuple) -> list:
    """(node, device index, label) of every device of the cluster that `specs` name (`node_devices`)."""
    nodes = [n["NodeID"] for n in ray.nodes() if n["Alive"]]
    listing = _remote(ray, node_devices, num_cpus=0, max_retries=0)
    asked = {node: listing.options(scheduling_strategy=_on(ray, node)).remote(specs) for node in nodes}
    found = []
    for node, ref in asked.items():
        try:
            found += [(node, index, label) for index, label in ray.get(ref, timeout=START_TIMEOUT_S)]
        except (ray.exceptions.RayError, LiftError):
            continue
    if not found:
        named = ", ".join(repr(s) for s in specs) or "the default device"
        raise ExploreError(f"no node of the Ray cluster ({len(nodes)} nodes) has an OpenCL device matching {named}")
    return found


@lru_cache(maxsize=None)
def _remote_function(ray, function: Callable, options: tuple):
    return ray.remote(**dict(options))(function)


def _remote(ray, function: Callable, **options):
    return _remote_function(ray, function, tuple(sorted(options.items())))


def _folder_name(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", label).strip("-.") or "device"


def _stop(ray, members: list) -> None:
    """Stop the actors' device workers, then the actors."""
    try:
        ray.get([m.actor.stop.remote() for m in members if m.state == READY], timeout=10)
    except ray.exceptions.RayError:
        pass
    for m in members:
        ray.kill(m.actor, no_restart=True)


def _finish(ray, group: "_Group") -> str:
    """The group's final round, on one of its devices that answers; what ended its search."""
    live = [d for d in group.devices if d.state == READY]
    if not live:
        return DEVICES_LOST
    group.search.worker = ActorWorker(ray, live[0].actor)
    return group.search.finish()


class DeviceActor:
    """One OpenCL device of a node (`device_index` there), in a Ray actor: it serves requests as a device
    `Worker` of its own does (a child process with the inputs `data` resident: the bytes of `Problem.save`), and
    those of the check at smaller sizes on a second one (`check_data`, where the problem has a check)."""

    def __init__(self, device_index: int, data: bytes, check_data: Optional[bytes], timing: TimingPolicy):
        self.folder = tempfile.TemporaryDirectory(prefix="lift-device-")
        spec = f"#{device_index}"
        self.workers = {False: Worker(DEVICE, spec, self._write("inputs.npz", data), timing)}
        if check_data is not None:
            self.workers[True] = Worker(DEVICE, spec, self._write("check_inputs.npz", check_data), CHECK_TIMING)

    def _write(self, name: str, data: bytes) -> Path:
        path = Path(self.folder.name) / name
        path.write_bytes(data)
        return path

    def start(self) -> DeviceFacts:
        """Open the device (the worker started); its facts."""
        return self.workers[False].start()

    def request(self, message: tuple, timeout: float, check: bool = False):
        """The device worker's reply to `message` (the check's with `check`); a crash or hang as an `Outcome`."""
        return isolated(self.workers[check], message, timeout)

    def stop(self) -> None:
        for worker in self.workers.values():
            worker.stop()


class ActorWorker:
    """A `DeviceActor` seen as a device `Worker` (`start`, `request`, `stop`), for what waits for each answer:
    opening the search (the bandwidth, the baseline), the check at smaller sizes and the final round."""

    def __init__(self, ray, actor, check: bool = False):
        self.ray, self.actor, self.check = ray, actor, check

    def start(self) -> DeviceFacts:
        """The device's facts, once the actor answers (one that Ray restarts meanwhile is waited for)."""
        ray, deadline = self.ray, time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                return ray.get(self.actor.start.remote(), timeout=max(deadline - time.monotonic(), 0.0))
            except ray.exceptions.ActorUnavailableError:
                if time.monotonic() < deadline:
                    time.sleep(_PROBE_INTERVAL_S)
                    continue
                raise LiftDeviceError("the device actor did not start: it stayed unavailable") from None
            except ray.exceptions.RayError as e:
                raise LiftDeviceError(f"the device actor did not start: {_first_line(e)}") from None

    def request(self, message: tuple, timeout: float):
        ray = self.ray
        try:
            return ray.get(self.actor.request.remote(message, timeout, self.check), timeout=timeout + START_TIMEOUT_S)
        except ray.exceptions.GetTimeoutError:
            raise WorkerTimedOut(f"the device actor did not answer within {timeout:.3g} s") from None
        except ray.exceptions.RayError as e:
            raise WorkerDied(f"the device actor died: {_first_line(e)}") from None

    def stop(self) -> None:
        """Nothing: the actor owns its device worker."""


def _first_line(error: Exception) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]


class _Builds:
    """Builds as Ray tasks on the node of the device that runs the candidate, at most one per source, device
    and node (`refs`, by the source's content hash); a build that timed out or crashed is forgotten."""

    def __init__(self, ray):
        self.ray = ray
        self.refs: dict = {}

    def submit(self, device: "_Device", source: str):
        """The reference of the `Outcome` of building `source` for `device`."""
        key = (hashlib.sha256(source.encode()).hexdigest(), device.label, device.node)
        if key not in self.refs:
            task = _remote(self.ray, build, num_cpus=1, max_retries=0)
            self.refs[key] = task.options(scheduling_strategy=_on(self.ray, device.node)).remote(device.index, source)
        return self.refs[key]

    def outcome(self, ref) -> Optional[Outcome]:
        """The build's `Outcome` (a cancelled one timed out); None when it was lost with its node."""
        ray = self.ray
        try:
            return ray.get(ref)
        except ray.exceptions.TaskCancelledError:
            self.forget(ref)
            return Outcome(TIMEOUT, "the build ran past its time limit")
        except ray.exceptions.RayError:
            self.forget(ref)
            return None

    def forget(self, ref) -> None:
        self.refs = {k: r for k, r in self.refs.items() if r != ref}


def build(device_index: int, source: str) -> Outcome:
    """The build task: compile `source` for device `device_index` of this node (`worker.compile_source`)."""
    return compile_source(runtime.select_device(f"#{device_index}"), source)


class _BuildsOn:
    """`BuildPool.submit` on one device's node, waiting for the build: `Builder.build` for the baseline."""

    def __init__(self, builds: _Builds, device: "_Device"):
        self.builds, self.device = builds, device

    def submit(self, source: str, timeout: float) -> Future:
        ray, ref = self.builds.ray, self.builds.submit(self.device, source)
        future: Future = Future()
        if not ray.wait([ref], timeout=timeout)[0]:
            ray.cancel(ref, force=True)
        future.set_result(self.builds.outcome(ref) or Outcome(CRASH, "the build's node was lost"))
        return future


READY, PROBING, WAITING, DEAD = "ready", "probing", "waiting", "dead"


@dataclass(eq=False)
class _Device:
    """A device actor as the scheduler sees it: where it is, the jobs it holds, and its `state`: `READY` to
    take jobs; `PROBING` after a failure, until its `start` answers; `WAITING` for `retry_at` to probe again
    (Ray restarts it); `DEAD` for good."""

    actor: object
    node: str
    index: int
    label: str
    held: list = field(default_factory=list)
    state: str = READY
    retry_at: float = 0.0


@dataclass(eq=False)
class _Job:
    """One evaluation on one device: its build's reference, then its evaluation's (`evaluating`); a build not
    done by `deadline` is cancelled."""

    item: Prepared
    group: "_Group"
    device: _Device
    ref: object
    deadline: float = math.inf
    evaluating: bool = False


@dataclass(eq=False)
class _Group:
    """The devices of one label and their search: its evaluations to come (`pending`), those given back
    (`returned`, taken first), how often each was (`attempts`, by candidate key) and all were (`requeued`)."""

    label: str
    search: object
    devices: list
    returned: deque = field(default_factory=deque)
    attempts: dict = field(default_factory=dict)
    exhausted: bool = False
    requeued: int = 0

    def __post_init__(self):
        self.pending = self.search.evaluations()

    def next(self) -> Optional[Prepared]:
        if self.returned:
            return self.returned.popleft()
        item = None if self.exhausted else next(self.pending, None)
        self.exhausted = item is None
        return item

    @property
    def busy(self) -> bool:
        """Whether it has work left: evaluations to come, given back or held by a device."""
        return not self.exhausted or bool(self.returned) or any(d.held for d in self.devices)


class _Scheduler:
    """The driver's loop (module docstring): it keeps `jobs + 1` evaluations on every device that answers, waits
    for whatever reference is ready first, and records each result as it comes, until the work or the budget
    (`deadline`) runs out; evaluations in flight at the deadline are dropped, as a local search drops its one."""

    def __init__(self, ray, groups: list, builds: _Builds, jobs: int, deadline: float):
        self.ray, self.groups, self.builds, self.depth, self.deadline = ray, groups, builds, jobs + 1, deadline
        self.waiting: dict = {}  # reference -> the jobs waiting for it (a build may serve several), or a probed device

    def run(self) -> None:
        while time.monotonic() < self.deadline:
            self._fill()
            if not self.waiting and not any(d.state == WAITING for g in self.groups if g.busy for d in g.devices):
                return
            for ref in self._ready():
                self._settle(ref)
            self._expire()
        for ref, waiting in self.waiting.items():
            if isinstance(waiting, list) and not waiting[0].evaluating:
                self.ray.cancel(ref, force=True)

    def _fill(self) -> None:
        now = time.monotonic()
        for group in self.groups:
            for device in group.devices:
                if device.state == WAITING and now >= device.retry_at:
                    self._probe(device)
                while device.state == READY and len(device.held) < self.depth:
                    item = group.next()
                    if item is None:
                        break
                    job = _Job(item, group, device, self.builds.submit(device, item.plan.source),
                               now + group.search.limit() * self.depth)
                    device.held.append(job)
                    self.waiting.setdefault(job.ref, []).append(job)
            if all(d.state == DEAD for d in group.devices):
                group.search.end, group.exhausted = DEVICES_LOST, True
                group.returned.clear()

    def _ready(self) -> list:
        """The references ready within the next wake-up (the budget's end, a build's deadline, a probe's retry)."""
        now = time.monotonic()
        builds = [j.deadline for w in self.waiting.values() if isinstance(w, list) for j in w if not j.evaluating]
        wake = min([self.deadline, now + _PROBE_INTERVAL_S, *builds])
        refs = list(self.waiting)
        if not refs:
            time.sleep(max(0.0, wake - now))
            return []
        ready, _ = self.ray.wait(refs, num_returns=1, timeout=max(0.0, wake - now))
        return self.ray.wait(refs, num_returns=len(refs), timeout=0)[0] if ready else []

    def _settle(self, ref) -> None:
        waiting = self.waiting.pop(ref, None)
        if isinstance(waiting, _Device):
            self._probed(waiting, ref)
            return
        for job in waiting or ():
            if job.evaluating:
                self._evaluated(job, ref)
            else:
                self._built(job, ref)

    def _built(self, job: _Job, ref) -> None:
        outcome = self.builds.outcome(ref)
        search = job.group.search
        if outcome is None:
            self._lost(job.device)
        elif not outcome.ok:
            self._done(job, outcome)
        elif search.remaining() > 0:
            failure = search.checked(job.item)
            if failure is not None:
                self._done(job, failure)
                return
            job.evaluating = True
            job.ref = job.device.actor.request.remote((EVALUATE, job.item.plan), search.limit())
            self.waiting[job.ref] = [job]

    def _evaluated(self, job: _Job, ref) -> None:
        try:
            outcome = self.ray.get(ref)
        except self.ray.exceptions.RayError:
            self._lost(job.device)
            return
        self._done(job, outcome)

    def _done(self, job: _Job, outcome: Outcome) -> None:
        job.device.held.remove(job)
        job.group.search.conclude(job.item, outcome)

    def _lost(self, device: _Device) -> None:
        """`device` failed: the jobs it held go back to its group's queue (a job given back `ATTEMPTS` times is
        recorded as a crash), and it is probed."""
        given = []
        for job in device.held:
            waiting = self.waiting.get(job.ref)
            if isinstance(waiting, list) and job in waiting:
                waiting.remove(job)
                if not waiting:
                    del self.waiting[job.ref]
            key = job.item.candidate.key
            job.group.attempts[key] = job.group.attempts.get(key, 0) + 1
            if job.group.attempts[key] >= ATTEMPTS:
                job.group.search.conclude(job.item, Outcome(CRASH, f"its device actor was lost {ATTEMPTS} times "
                                                                   "while it ran"))
            else:
                given.append(job)
        device.held.clear()
        for job in reversed(given):
            job.group.returned.appendleft(job.item)
            job.group.requeued += 1
        self._probe(device)

    def _probe(self, device: _Device) -> None:
        device.state = PROBING
        self.waiting[device.actor.start.remote()] = device

    def _probed(self, device: _Device, ref) -> None:
        ray = self.ray
        try:
            ray.get(ref)
            device.state = READY
        except ray.exceptions.ActorDiedError:
            device.state = DEAD
        except ray.exceptions.RayError:
            device.state, device.retry_at = WAITING, time.monotonic() + _PROBE_INTERVAL_S

    def _expire(self) -> None:
        """Cancel the builds past their deadline (they end as timeouts)."""
        now = time.monotonic()
        for ref, waiting in self.waiting.items():
            if isinstance(waiting, list) and any(not j.evaluating and j.deadline <= now for j in waiting):
                self.ray.cancel(ref, force=True)
                for job in waiting:
                    job.deadline = math.inf
