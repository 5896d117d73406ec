"""OpenCL devices through PyOpenCL: choosing one, building programs, and caching contexts.

A device is named by a case-insensitive substring of its platform's name or vendor, or of its device name or
type (`nvidia`, `intel`, `pocl`, `cpu`, `gpu`), or by its index as `lift devices` numbers them (`#1`). With no name,
`PYOPENCL_CTX` is honoured, else the first CPU device is used (PoCL on a machine without a GPU). A user's
own `pyopencl.Context` and `CommandQueue` may stand for the device (`target`).
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from lift.errors import LiftCodegenError, LiftDeviceError

INSTALL_HINT = ("no OpenCL platform found: install one, for example PoCL for the CPU "
                "(Debian/Ubuntu: apt-get install pocl-opencl-icd)")


@dataclass(frozen=True)
class DeviceInfo:
    """One OpenCL device as `lift devices` lists it."""

    index: int
    platform: str
    name: str
    kind: str
    version: str
    driver: str
    compute_units: int
    max_work_group_size: int
    local_mem_size: int
    global_mem_size: int

    def describe(self) -> str:
        return f"#{self.index}  {self.platform} / {self.name}  ({self.kind}, {self.compute_units} compute units)"


def _cl():
    try:
        import pyopencl as cl
    except ImportError as e:
        raise LiftDeviceError(f"PyOpenCL is not installed ({e}): pip install pyopencl") from None
    return cl


@lru_cache(maxsize=1)
def _all_devices() -> tuple:
    cl = _cl()
    try:
        platforms = cl.get_platforms()
    except cl.Error:
        platforms = []
    return tuple(d for p in platforms for d in _platform_devices(p))


def _platform_devices(platform) -> list:
    try:
        return platform.get_devices()
    except Exception:
        return []


def devices() -> list:
    """Every OpenCL device present, numbered."""
    cl = _cl()
    out = []
    for i, d in enumerate(_all_devices()):
        out.append(DeviceInfo(i, d.platform.name.strip(), d.name.strip(), cl.device_type.to_string(d.type).lower(),
                              d.version.strip(), d.driver_version.strip(), d.max_compute_units,
                              d.max_work_group_size, d.local_mem_size, d.global_mem_size))
    return out


def select_device(spec: Optional[str] = None):
    """The PyOpenCL device named by `spec` (see the module docstring)."""
    found = _all_devices()
    if not found:
        raise LiftDeviceError(INSTALL_HINT)
    infos = devices()
    if spec is None:
        env = os.environ.get("PYOPENCL_CTX")
        if env:
            return _from_pyopencl_ctx(env, found, infos)
        for d, info in zip(found, infos):
            if "cpu" in info.kind:
                return d
        return found[0]
    text = spec.strip().lower()
    if text.startswith("#") and text[1:].isdigit():
        i = int(text[1:])
        if i < len(found):
            return found[i]
    else:
        for d, info in zip(found, infos):
            if text and text in f"{info.platform} {d.platform.vendor} {info.name} {info.kind}".lower():
                return d
    listing = "; ".join(i.describe() for i in infos)
    raise LiftDeviceError(f"no OpenCL device matches {spec!r}; present: {listing}")


def device_spec(device) -> str:
    """The name `select_device` takes for `device` (its index as `lift devices` numbers it, `#1`), so that
    another process (`lift explore`'s workers) opens the same device."""
    for i, d in enumerate(_all_devices()):
        if d == device:
            return f"#{i}"
    raise LiftDeviceError(f"the device {device.name.strip()} is not among the OpenCL devices present")


def _from_pyopencl_ctx(env: str, found: tuple, infos: list):
    parts = env.split(":")
    if all(p.isdigit() for p in parts if p):
        cl = _cl()
        platforms = cl.get_platforms()
        p = int(parts[0]) if parts[0] else 0
        d = int(parts[1]) if len(parts) > 1 and parts[1] else 0
        if p < len(platforms):
            devs = _platform_devices(platforms[p])
            if d < len(devs):
                return devs[d]
        raise LiftDeviceError(f"PYOPENCL_CTX={env!r} names no device; present: "
                              + "; ".join(i.describe() for i in infos))
    return select_device(env)


@dataclass(frozen=True)
class Target:
    """Where programs run: a device, a context holding it, and an in-order command queue on both."""

    device: object
    context: object
    queue: object


def target(device=None, context=None, queue=None) -> Target:
    """The `Target` given by a device (a `pyopencl.Device`, a name as `select_device` takes, or a `pyopencl.Context`
    of one device), a user's `context` or `queue`, or none of them (lift's own profiling queue on the default
    device); what is given must agree."""
    cl = _cl()
    if isinstance(device, cl.Context):
        if context is not None and context != device:
            raise LiftDeviceError("device= and context= give two different contexts")
        device, context = None, device
    if device is not None and not isinstance(device, (str, cl.Device)):
        raise LiftDeviceError(f"device= takes a pyopencl.Device, a pyopencl.Context or a device name, got "
                              f"{type(device).__name__}; a queue goes to queue=")
    if queue is not None:
        if not isinstance(queue, cl.CommandQueue):
            raise LiftDeviceError(f"queue= takes a pyopencl.CommandQueue, got {type(queue).__name__}")
        if context is not None and queue.context != context:
            raise LiftDeviceError("the queue given belongs to another context than the context given")
        context = queue.context
        if queue.properties & cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE:
            raise LiftDeviceError("lift needs an in-order command queue; the queue given runs out of order")
    if context is not None and not isinstance(context, cl.Context):
        raise LiftDeviceError(f"context= takes a pyopencl.Context, got {type(context).__name__}")
    if isinstance(device, str):
        device = select_device(device)
    if context is None:
        device = device if device is not None else select_device()
        return Target(device, *context_and_queue(device))
    if device is None:
        device = queue.device if queue is not None else _only_device(context)
    if device not in context.devices or (queue is not None and queue.device != device):
        raise LiftDeviceError(f"the device {device.name.strip()} is not the one of the context or queue given")
    return Target(device, context, queue if queue is not None else _profiling_queue(context, device))


def _only_device(context) -> object:
    if len(context.devices) != 1:
        raise LiftDeviceError(f"the context holds {len(context.devices)} devices: give the one to use as device= "
                              "(with context=), or a queue=")
    return context.devices[0]


@lru_cache(maxsize=None)
def _profiling_queue(context, device):
    cl = _cl()
    return cl.CommandQueue(context, device, properties=cl.command_queue_properties.PROFILING_ENABLE)


def memory_pool(queue):
    """A new pool of buffers on `queue`'s context (`pyopencl.tools.MemoryPool`): freed buffers are held for reuse."""
    from pyopencl.tools import ImmediateAllocator, MemoryPool

    return MemoryPool(ImmediateAllocator(queue))


@lru_cache(maxsize=None)
def context_and_queue(device):
    """A context and a profiling command queue for `device`, made once; `LiftDeviceError` where the driver
    refuses them (a GPU's driver out of memory for one more context, say)."""
    cl = _cl()
    try:
        ctx = cl.Context([device])
        queue = cl.CommandQueue(ctx, device, properties=cl.command_queue_properties.PROFILING_ENABLE)
    except cl.Error as e:
        raise LiftDeviceError(f"the OpenCL driver refused a context on {device.name.strip()}: {e}") from None
    return ctx, queue


def build(source: str, device, options: tuple = (), context=None):
    """Build OpenCL C for `device` in `context` (by default lift's own; PyOpenCL caches binaries on disk, keyed by
    source and device).

    A build that succeeds says nothing: PyOpenCL warns whenever a driver's build log is not empty, and Intel's CPU
    runtime always logs its stages, which a user cannot act on (`PYOPENCL_COMPILER_OUTPUT=1` shows the logs)."""
    cl = _cl()
    ctx = context if context is not None else context_and_queue(device)[0]
    try:
        with warnings.catch_warnings():
            if not os.environ.get("PYOPENCL_COMPILER_OUTPUT"):
                warnings.simplefilter("ignore", cl.CompilerWarning)
            return cl.Program(ctx, source).build(options=list(options))
    except cl.RuntimeError as e:
        log = str(e).strip().splitlines()
        detail = "\n".join(log[-20:])
        raise LiftCodegenError(f"the OpenCL compiler rejected the generated code on {device.name.strip()}:\n"
                               f"{detail}") from None


def device_label(device) -> str:
    return f"{device.platform.name.strip()} / {device.name.strip()} (driver {device.driver_version.strip()})"
