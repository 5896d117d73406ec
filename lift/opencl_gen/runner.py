"""The host runner: a generated program's kernels run on an OpenCL queue, for `lift.compile` and `lift explore`.

A `RunPlan` is a generated program under bound sizes, as plain data (it crosses to the explorer's device
worker process: lift programs do not): the source; each kernel's arguments (an input by position, an
output, a temporary's buffer, a size as the program's index type, `lift.opencl_gen.index_width`) and
launch sizes; the temporaries, sharing buffers where their lifetimes do not overlap
(`lift.opencl_gen.memory.share_buffers`); the outputs, one per output memory. `check_device` rejects a
plan the device cannot run before anything is allocated. `Run` binds a plan to buffers on one queue and
launches its kernels in order (a kernel the host loops, `iterate-host`, once per launch of its loop, on the
buffers each binds), again and again, timed with profiling events; `upload` and `download`
move host data, timed alike. `lift.opencl_gen.compiled` binds inputs from the caller (numpy arrays
uploaded, PyOpenCL arrays as they are), the explorer's `DeviceSession` its inputs resident on the device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Mapping, Optional, Sequence

import numpy as np

from lift.errors import LiftDeviceError
from lift.ir.binding import host_dtype, host_shape
from lift.opencl_gen import runtime
from lift.opencl_gen.index_width import DTYPES
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.launch import Launch, check_allocation, check_global_memory, check_launch, private_group
from lift.opencl_gen.memory import INPUT, OUTPUT, memory_bytes, output_types, share_buffers

INPUT_ARG, OUTPUT_ARG, BUFFER_ARG, SIZE_ARG = "input", "output", "buffer", "size"


@dataclass(frozen=True)
class KernelRun:
    """One kernel launch: `args` are `(kind, value)` pairs (an input's position, an output's index, a temporary
    buffer's slot, or a size as a numpy integer of the program's index type)."""

    name: str
    args: tuple
    global_size: tuple
    local_size: Optional[tuple]
    local_bytes: int


@dataclass(frozen=True)
class Operand:
    """An input or output memory on the host: its name, numpy shape (`lift.ir.binding.host_shape`) and dtype;
    `scalar` for a scalar input (a kernel argument by value); `overwrites`, for an output written over an
    input (`compile(..., in_place=...)`), that input's position."""

    name: str
    shape: tuple
    dtype: np.dtype
    scalar: bool = False
    overwrites: Optional[int] = None

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


@dataclass(frozen=True)
class RunPlan:
    """A generated program ready to run under bound sizes (see the module docstring).

    `temporaries` are `(name, slot, bytes)`; a slot's buffer is as large as its largest temporary."""

    source: str
    kernels: tuple
    inputs: tuple
    outputs: tuple
    temporaries: tuple

    @property
    def slots(self) -> tuple:
        """The bytes of each temporary buffer."""
        sizes: dict = {}
        for _, slot, nbytes in self.temporaries:
            sizes[slot] = max(sizes.get(slot, 0), nbytes)
        return tuple(sizes[s] for s in range(len(sizes)))


def make_plan(g: GeneratedProgram, sizes: Mapping[str, int]) -> RunPlan:
    """The run plan of program `g` under `sizes`, which bind every size its kernels take."""
    params = g.typed.expr.params
    position = {p.name: i for i, p in enumerate(params)}
    scalars = {m.name for m in g.inputs if m.scalar_variable}
    inputs = tuple(Operand(p.name, host_shape(p.t, sizes), host_dtype(p.t), p.name in scalars) for p in params)
    outputs = tuple(Operand(m.name, host_shape(t, sizes), host_dtype(t), overwrites=position.get(m.name))
                    for m, t in zip(g.outputs, output_types(g.typed.type)))
    shared = share_buffers(g.kernels, g.temporaries, sizes)
    temporaries = tuple((m.name, shared[m.name][0], memory_bytes(m, sizes)) for m in g.temporaries if m.name in shared)
    output_index = {m.name: i for i, m in enumerate(g.outputs)}
    kernels = []
    for k in g.kernels:
        glb, loc = k.launch.evaluate(sizes)
        local_bytes = sum(memory_bytes(m, sizes) for m in k.locals)
        if loc is None:
            loc = private_group(glb, sum(memory_bytes(m, sizes) for m in k.privates))
        for binding in k.launches(sizes):
            args = []
            for m in (binding.get(m, m) for m in k.params):
                if m.kind == OUTPUT or m.name in output_index:
                    args.append((OUTPUT_ARG, output_index[m.name]))
                elif m.kind == INPUT:
                    args.append((INPUT_ARG, position[m.name]))
                else:
                    args.append((BUFFER_ARG, shared[m.name][0]))
            args += [(SIZE_ARG, DTYPES[g.index](sizes[s])) for s in k.size_params]
            kernels.append(KernelRun(k.name, tuple(args), glb, loc, local_bytes))
    return RunPlan(g.source, tuple(kernels), inputs, outputs, temporaries)


def check_device(plan: RunPlan, device) -> None:
    """Reject a plan the device cannot run (an array beyond its largest allocation, arrays beyond its global
    memory, a launch beyond its limits, local memory beyond its own) with a `LiftDeviceError`, before anything
    is allocated."""
    arrays = [(m.name, m.nbytes) for m in plan.inputs if not m.scalar] \
        + [(m.name, m.nbytes) for m in plan.outputs if m.overwrites is None] \
        + [(name, nbytes) for name, _, nbytes in plan.temporaries]
    check_allocation(arrays, device.max_mem_alloc_size)
    check_global_memory(arrays, device.global_mem_size)
    for k in plan.kernels:
        check_launch(Launch(k.global_size, k.local_size), {}, device.max_work_group_size,
                     tuple(device.max_work_item_sizes), k.name)
        if k.local_bytes > device.local_mem_size:
            raise LiftDeviceError(f"{k.name} needs {k.local_bytes} bytes of local memory; the device has "
                                  f"{device.local_mem_size}")


def kernels_of(program) -> dict:
    """The kernels of a built `pyopencl.Program`, by name."""
    return {k.function_name: k for k in program.all_kernels()}


class Run:
    """A plan bound on `queue` to `inputs` (a buffer, or a value for a scalar, per position), `outputs` (a
    buffer per output; one written over an input is that input's) and `slots` (a buffer per temporary slot).

    It holds every buffer its kernels' arguments name, so that none is released while it may run; the
    arguments are set at each launch, so that runs sharing kernels do not disturb each other."""

    def __init__(self, plan: RunPlan, kernels: Mapping, queue, inputs: Sequence, outputs: Sequence, slots: Sequence):
        self.plan, self.queue = plan, queue
        self.inputs, self.outputs, self.slots = list(inputs), list(outputs), list(slots)
        operands = {INPUT_ARG: self.inputs, OUTPUT_ARG: self.outputs, BUFFER_ARG: self.slots}
        self.launches = [(kernels[k.name], k.global_size, k.local_size,
                          [value if kind == SIZE_ARG else operands[kind][value] for kind, value in k.args])
                         for k in plan.kernels]

    def enqueue(self, wait_for: Optional[list] = None) -> list:
        """Enqueue the kernels in order (the first after `wait_for`); their events."""
        cl = runtime._cl()
        events = []
        for kernel, glb, loc, args in self.launches:
            kernel.set_args(*args)
            after = None if events else wait_for
            events.append(cl.enqueue_nd_range_kernel(self.queue, kernel, glb, loc, wait_for=after))
        return events

    def launch(self) -> tuple:
        """Run the kernels in order and wait; their times in milliseconds (profiling events)."""
        events = self.enqueue()
        runtime._cl().wait_for_events(events)
        return tuple(elapsed_ms([e]) for e in events)

    def download(self, into: Optional[Sequence] = None) -> tuple:
        """Copy each output into the numpy array `into` gives for it (of its host shape; None leaves it on the
        device), by default a new one, and wait: `(the arrays, the transfers' events)`."""
        cl = runtime._cl()
        hosts = list(into) if into is not None else [np.empty(m.shape, m.dtype) for m in self.plan.outputs]
        events = [cl.enqueue_copy(self.queue, h, b, is_blocking=False)
                  for h, b in zip(hosts, self.outputs) if h is not None and h.size]
        if events:
            cl.wait_for_events(events)
        return hosts, events

    def release(self) -> None:
        """Release the outputs' and temporaries' buffers now (the explorer's, one candidate after another)."""
        inputs = {id(b) for b in self.inputs}
        for b in {id(b): b for b in self.outputs + self.slots if id(b) not in inputs}.values():
            b.release()


def allocate(plan: RunPlan, allocator: Callable[[int], object], inputs: Sequence, given: Sequence = ()) -> tuple:
    """The outputs' and temporary slots' buffers, `(outputs, slots)`: an output's is the buffer `given` for it (if
    any and not None), or that of the input among `inputs` it overwrites, or a new one from `allocator` (bytes →
    buffer), as is each slot's."""
    given = list(given) or [None] * len(plan.outputs)
    outputs = [b if b is not None else inputs[m.overwrites] if m.overwrites is not None else allocator(max(m.nbytes, 1))
               for m, b in zip(plan.outputs, given)]
    return outputs, [allocator(max(n, 1)) for n in plan.slots]


def upload(queue, pairs: Sequence) -> list:
    """Copy each `(buffer, numpy array)` to the device and wait; the transfers' events."""
    cl = runtime._cl()
    events = [cl.enqueue_copy(queue, buf, data, is_blocking=False) for buf, data in pairs if data.nbytes]
    if events:
        cl.wait_for_events(events)
    return events


def elapsed_ms(events: Sequence) -> float:
    """The events' total time on the device in milliseconds, from their profiling information."""
    return sum((e.profile.end - e.profile.start) * 1e-6 for e in events)
