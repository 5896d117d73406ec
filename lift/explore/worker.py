"""Isolation: OpenCL work runs in worker processes, so that a driver crash or a hang costs one candidate.

A `Worker` is a child process (started with multiprocessing's `spawn`, so it shares no OpenCL state
with the explorer) that opens the device once and then serves requests one at a time over a pipe. The
explorer waits for each reply with a time limit; when the child dies or runs past the limit, it is
killed, the request fails with `WorkerDied` or `WorkerTimedOut`, and the next request starts a fresh
child. Two roles:

- `DEVICE`: the device worker. It loads the program's inputs and reference output once (an `.npz`
  file), keeps the inputs on the device, and evaluates run plans (`DeviceSession`); it also measures
  the streaming bandwidth.
- `BUILDER`: builds sources, so that several candidates compile in parallel (`BuildPool`); PyOpenCL's
  binary cache then spares the device worker the compilation.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import numpy as np

from lift.errors import LiftCodegenError, LiftDeviceError, LiftError
from lift.explore.bandwidth import measure_bandwidth
from lift.explore.core_cache import core_cache_bytes
from lift.explore.shared_cache import shared_cache_bytes
from lift.explore.cost_model import DeviceModel
from lift.explore.evaluation import COMPILE, CRASH, OK, TIMEOUT, RTOL, DeviceSession, Outcome, TimingPolicy
from lift.opencl_gen import runtime

DEVICE, BUILDER = "device", "build"
EVALUATE, BUILD, BANDWIDTH = "evaluate", "build", "bandwidth"
_REQUESTS = {EVALUATE: "an evaluation", BUILD: "a build", BANDWIDTH: "the bandwidth measurement"}
START_TIMEOUT_S = 120.0


class WorkerDied(LiftError):
    """The worker process died while serving a request."""


class WorkerTimedOut(LiftError):
    """The worker process did not answer a request in time (it was killed)."""


@dataclass(frozen=True)
class DeviceFacts:
    """The device a worker opened, as the explorer needs it: label (with driver version), limits, the sizes of
    its global-memory cache as the cost model counts on it (`lift.explore.shared_cache`) and of its lines, and of a
    compute unit's own cache (`lift.explore.core_cache`)."""

    label: str
    kind: str
    compute_units: int
    local_mem_bytes: int
    max_work_group_size: int
    vector_width: int
    max_item_sizes: tuple = ()
    cache_bytes: int = 0
    cache_line_bytes: int = 64
    near_cache_bytes: int = 0

    def model(self, bandwidth) -> DeviceModel:
        """The cost model's view of this device, with its measured `StreamingBandwidth`."""
        return DeviceModel.for_device(self.kind, self.compute_units, bandwidth.gbps, bandwidth.launch_ms,
                                      self.local_mem_bytes, self.max_work_group_size, self.vector_width,
                                      self.cache_bytes, self.cache_line_bytes, self.near_cache_bytes,
                                      bandwidth.copy_gbps)


class Worker:
    """A child process serving requests on one device (see the module docstring)."""

    def __init__(self, role: str, device: Optional[str] = None, data: Optional[Path] = None,
                 policy: TimingPolicy = TimingPolicy()):
        self.role, self.device, self.data, self.policy = role, device, data, policy
        self.process = None
        self.conn = None
        self.facts: Optional[DeviceFacts] = None
        self.lock = threading.Lock()

    def start(self, timeout: float = START_TIMEOUT_S) -> DeviceFacts:
        """Start the child unless it runs; it opens the device (and loads the inputs) before answering."""
        if self.process is not None:
            return self.facts
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=_serve, args=(child, self.role, self.device, self.data, self.policy),
                                   daemon=True, name=f"lift-explore-{self.role}")
        self.process.start()
        child.close()
        try:
            status, answer = self._exchange(None, timeout, "startup")
        except (WorkerDied, WorkerTimedOut) as e:
            raise LiftDeviceError(str(e)) from None
        if status == "error":
            self.stop()
            raise LiftDeviceError(answer)
        self.facts = answer
        return answer

    def request(self, message: tuple, timeout: float):
        """Send `message` (kind, arguments...) and return the reply.

        Raises `WorkerDied` or `WorkerTimedOut` (the child then killed); a reply asking for a fresh
        worker stops this one.
        """
        self.start()
        reply = self._exchange(message, timeout, _REQUESTS[message[0]])
        if isinstance(reply, Outcome) and reply.broken:
            self.stop()
        return reply

    def _exchange(self, message: Optional[tuple], timeout: float, what: str):
        process = self.process
        try:
            if message is not None:
                self.conn.send(message)
            if not self.conn.poll(timeout):
                self.stop()
                raise WorkerTimedOut(f"{what} took longer than {timeout:.3g} s")
            return self.conn.recv()
        except (EOFError, OSError):
            process.join(5)
            self.stop()
            raise WorkerDied(f"the {self.role} worker died during {what} ({_exit_status(process.exitcode)})") from None

    def kill(self) -> None:
        """Kill the child without waiting (from another thread: the one waiting on it sees it die)."""
        process = self.process
        if process is not None and process.is_alive():
            process.kill()

    def stop(self) -> None:
        """Kill the child, if any, and wait for it; the next request starts a new one."""
        with self.lock:
            if self.process is None:
                return
            self.kill()
            self.process.join()
            self.conn.close()
            self.process = self.conn = None

    def __enter__(self) -> "Worker":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def evaluate(worker: Worker, plan, timeout: float) -> Outcome:
    """Evaluate a run plan in the device worker; a death or a hang becomes a `crash` or `timeout` outcome."""
    return isolated(worker, (EVALUATE, plan), timeout)


def measure_streaming(worker: Worker, *nbytes: int):
    """The device's `StreamingBandwidth`, measured by the device worker (over a buffer of `nbytes`, if given)."""
    reply = worker.request((BANDWIDTH, *nbytes), START_TIMEOUT_S)
    if isinstance(reply, Outcome):
        raise LiftDeviceError(f"measuring the streaming bandwidth failed: {reply.reason}")
    return reply


def isolated(worker: Worker, message: tuple, timeout: float) -> Outcome:
    """The worker's reply to `message`; its death or a hang a `crash` or `timeout` outcome."""
    try:
        return worker.request(message, timeout)
    except WorkerDied as e:
        return Outcome(CRASH, str(e))
    except WorkerTimedOut as e:
        return Outcome(TIMEOUT, str(e))


class BuildPool:
    """`jobs` build workers, each driven by a thread, compiling sources in parallel."""

    def __init__(self, jobs: int, device: Optional[str]):
        self.idle: queue.SimpleQueue = queue.SimpleQueue()
        self.workers = [Worker(BUILDER, device) for _ in range(jobs)]
        for w in self.workers:
            self.idle.put(w)
        self.threads = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="lift-build")

    def submit(self, source: str, timeout: float) -> Future:
        """A future `Outcome`: `ok`, or `compile`, `crash`, `timeout` with the reason."""
        return self.threads.submit(self._build, source, timeout)

    def _build(self, source: str, timeout: float) -> Outcome:
        worker = self.idle.get()
        try:
            return isolated(worker, (BUILD, source), timeout)
        finally:
            self.idle.put(worker)

    def close(self) -> None:
        """Stop the workers at once: builds in flight end as crashes that nobody waits for."""
        self.threads.shutdown(wait=False, cancel_futures=True)
        for w in self.workers:
            w.kill()
        self.threads.shutdown(wait=True)
        for w in self.workers:
            w.stop()

    def __enter__(self) -> "BuildPool":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _exit_status(code: Optional[int]) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


# --- the child ---------------------------------------------------------------------------------------------


def _serve(conn, role: str, device_spec: Optional[str], data: Optional[Path], policy: TimingPolicy) -> None:
    """The worker process: open the device, answer with its facts, then serve requests until the pipe closes.

    It ignores Ctrl-C, which reaches the whole process group: the explorer stops it.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        device = runtime.select_device(device_spec)
        session = _session(device, data, policy) if role == DEVICE else None
    except Exception as e:
        conn.send(("error", str(e) if isinstance(e, LiftError) else
                   f"the device worker could not open the device: {type(e).__name__}: {e}"))
        return
    conn.send(("ready", device_facts(device)))
    while True:
        try:
            kind, *payload = conn.recv()
        except EOFError:
            return
        try:
            reply = _answer(kind, payload, device, session)
        except Exception as e:
            reply = Outcome(CRASH, f"the worker failed: {type(e).__name__}: {e}", broken=True)
        conn.send(reply)
        if isinstance(reply, Outcome) and reply.broken:
            return


def _answer(kind: str, payload: list, device, session: Optional[DeviceSession]):
    if kind == EVALUATE:
        return session.evaluate(*payload)
    if kind == BUILD:
        return compile_source(device, *payload)
    return measure_bandwidth(device, *payload)


def _session(device, data: Path, policy: TimingPolicy) -> DeviceSession:
    with np.load(data) as stored:
        inputs = [stored[f"input_{i}"] for i in range(sum(f.startswith("input_") for f in stored.files))]
        outputs = sum(f.startswith("reference_") for f in stored.files)
        reference = tuple(stored[f"reference_{k}"] for k in range(outputs)) if outputs else \
            stored["reference"] if "reference" in stored.files else None
        tolerance = tuple(float(v) for v in stored["tolerance"]) if "tolerance" in stored.files else (RTOL, 0.0)
    return DeviceSession(device, inputs, reference, policy, tolerance)


def compile_source(device, source: str) -> Outcome:
    """Build `source` for `device` (filling PyOpenCL's binary cache): `ok`, or `compile` with the log."""
    try:
        runtime.build(source, device)
    except LiftCodegenError as e:
        return Outcome(COMPILE, str(e))
    return Outcome(OK)


def device_facts(device) -> DeviceFacts:
    """What the explorer needs to know of an OpenCL device (see `DeviceFacts`)."""
    import pyopencl as cl

    kind = "gpu" if device.type & cl.device_type.GPU else "cpu"
    return DeviceFacts(runtime.device_label(device), kind, device.max_compute_units, device.local_mem_size,
                       device.max_work_group_size, device.native_vector_width_float, tuple(device.max_work_item_sizes),
                       shared_cache_bytes(kind, device.global_mem_cache_size, device.max_compute_units),
                       device.global_mem_cacheline_size, core_cache_bytes(kind, device.local_mem_size))
