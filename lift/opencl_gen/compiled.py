"""`lift.compile`: a lowered expression as a callable program on an OpenCL device.

Calling the program on numpy arrays binds the sizes from their shapes, checks them against the
expression's constraints and the launch against the device, runs the kernels in order and returns the
result as numpy, as `lift.interpret` does (a tuple of arrays for a program with several outputs).
`time` measures the kernels alone with profiling events (median of `k` runs) and the transfers
separately.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Callable, Mapping, Optional

import numpy as np

from lift.errors import LiftCodegenError, LiftDeviceError
from lift.ir.binding import bind_sizes, host_dtype, host_shape, to_host
from lift.ir.nodes import Lambda
from lift.ir.typecheck import infer
from lift.opencl_gen import runtime
from lift.opencl_gen.index_width import DTYPES, INT, array_lengths, index_type
from lift.opencl_gen.kernels import GeneratedProgram, generate
from lift.opencl_gen.launch import Launch, check_allocation, check_launch
from lift.opencl_gen.manifest import manifest
from lift.opencl_gen.memory import is_storable, memory_bytes, output_types, share_buffers
from lift.rules.lowering_choice import Lowering, Tuned, lowering_for
from lift.types.types import TupleType, Type


@dataclass(frozen=True)
class Timing:
    """Median times in milliseconds: the kernels alone, and the transfers to and from the device."""

    kernels_ms: float
    upload_ms: float
    download_ms: float
    per_kernel_ms: tuple
    runs: int

    @property
    def total_ms(self) -> float:
        return self.kernels_ms + self.upload_ms + self.download_ms


class CompiledProgram:
    """A program generated for one device; sizes left unbound are specialised per input shape."""

    def __init__(self, program: Lambda, device=None, sizes: Optional[Mapping[str, int]] = None,
                 name: str = "lift", launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None,
                 lowering: Optional[Callable[[dict], Lambda]] = None):
        self.program = program
        self.lowering = lowering
        self.in_place = in_place
        self.device = device if device is not None and not isinstance(device, str) else runtime.select_device(device)
        self.name = name
        self.sizes = dict(sizes or {})
        self.launch = dict(launch or {})
        self._generated: dict = {}
        self._built: dict = {}

    def generated(self, sizes: Optional[Mapping[str, int]] = None) -> GeneratedProgram:
        """The generated program for a size binding (the compile-time sizes by default)."""
        key = tuple(sorted((sizes or self.sizes).items()))
        if key not in self._generated:
            self._generated[key] = generate(self.lowered(dict(key)), self.name, dict(key), self.launch, self.in_place)
        return self._generated[key]

    def lowered(self, sizes: Optional[Mapping[str, int]] = None) -> Lambda:
        """The lowered program the kernels are generated from, for a size binding (`lowering`)."""
        return self.program if self.lowering is None else self.lowering(dict(sizes or self.sizes))

    @property
    def source(self) -> str:
        return self.generated().source

    @property
    def manifest(self) -> dict:
        return manifest(self.generated())

    def _for_call(self, inputs: tuple):
        typed = infer(self.program)
        bound = bind_sizes(typed.param_types, inputs, [p.name for p in typed.expr.params], self.sizes)
        typed.check_sizes(bound)
        try:
            g = self.generated(self.sizes if self.lowering is None else bound)
        except LiftCodegenError:
            g = self.generated(bound)
        if g.index == INT and index_type(array_lengths(g.typed.expr), bound, f"program {self.name}") != INT:
            g = self.generated(bound)  # sizes beyond what the kernels were generated for: 64-bit indices
        if id(g) not in self._built:
            program = runtime.build(g.source, self.device)
            self._built[id(g)] = {k.name: runtime._cl().Kernel(program, k.name) for k in g.kernels}
        return g, self._built[id(g)], bound

    def __call__(self, *inputs):
        run = self.prepare(*inputs)
        run.upload()
        run.launch()
        return run.download()[0]

    def time(self, *inputs, repeat: int = 10, warmup: int = 1) -> Timing:
        """Median kernel and transfer times over `repeat` runs, after `warmup` runs."""
        run = self.prepare(*inputs)
        kernel_times, up_times, down_times, per_kernel = [], [], [], []
        for i in range(warmup + repeat):
            up = run.upload()
            times = run.launch()
            _, down = run.download()
            if i >= warmup:
                per_kernel.append(times)
                kernel_times.append(sum(times))
                up_times.append(up)
                down_times.append(down)
        median = statistics.median
        return Timing(median(kernel_times), median(up_times), median(down_times),
                      tuple(median(t[k] for t in per_kernel) for k in range(len(run.kernels))), repeat)

    def prepare(self, *inputs) -> "PreparedRun":
        """Buffers and kernel arguments for these inputs, checked against the device, ready to launch."""
        cl = runtime._cl()
        g, built, sizes = self._for_call(inputs)
        ctx, _ = runtime.context_and_queue(self.device)
        dev = self.device
        for k in g.kernels:
            check_launch(k.launch, sizes, dev.max_work_group_size, tuple(dev.max_work_item_sizes), k.name)
            local_bytes = sum(memory_bytes(m, sizes) for m in k.locals)
            if local_bytes > dev.local_mem_size:
                raise LiftDeviceError(f"{k.name} needs {local_bytes} bytes of local memory; the device has "
                                      f"{dev.local_mem_size}")
        mf = cl.mem_flags
        host_inputs = {p.name: to_host(v, p.t, p.name) for p, v in zip(g.typed.expr.params, inputs)}
        out_types = output_types(g.typed.type)
        temporaries = share_buffers(g.kernels, g.temporaries, sizes)
        check_allocation([(m.name, np.asarray(host_inputs[m.name]).nbytes) for m in g.inputs if not m.scalar_variable]
                         + [(m.name, int(np.prod(host_shape(t, sizes), dtype=np.int64)) * host_dtype(t).itemsize)
                            for m, t in zip(g.outputs, out_types)]
                         + [(name, nbytes) for name, (_, nbytes) in temporaries.items()], dev.max_mem_alloc_size)
        buffers, scalars, uploads = {}, {}, []
        for mem in g.inputs:
            data = host_inputs[mem.name]
            if mem.scalar_variable:
                scalars[mem.name] = np.asarray(data, host_dtype(mem.elem)).reshape(())[()]
            else:
                data = np.ascontiguousarray(data)
                access = mf.READ_ONLY if mem.readonly else mf.READ_WRITE
                buffers[mem.name] = cl.Buffer(ctx, access | mf.COPY_HOST_PTR, hostbuf=data) if data.nbytes \
                    else cl.Buffer(ctx, access, size=1)
                uploads.append((buffers[mem.name], data))
        out_hosts = [np.empty(host_shape(t, sizes), dtype=host_dtype(t)) for t in out_types]
        for mem, host in zip(g.outputs, out_hosts):
            if mem.name in buffers:
                continue
            buffers[mem.name] = cl.Buffer(ctx, mf.READ_WRITE, size=max(host.nbytes, 1))
        pool = {}
        for name, (slot, nbytes) in temporaries.items():
            if slot not in pool:
                pool[slot] = cl.Buffer(ctx, mf.READ_WRITE, size=max(nbytes, 1))
            buffers[name] = pool[slot]
        kernels = []
        for k in g.kernels:
            kernel = built[k.name]
            args = [scalars[m.name] if m.scalar_variable else buffers[m.name] for m in k.params]
            kernel.set_args(*args, *(DTYPES[g.index](sizes[s]) for s in k.size_params))
            kernels.append((kernel, *k.launch.evaluate(sizes)))
        return PreparedRun(self.device, kernels, uploads, out_hosts, [buffers[m.name] for m in g.outputs], buffers,
                           g.typed.type)


@dataclass
class PreparedRun:
    """A program bound to its inputs on the device: upload, launch the kernels, download; each timed.

    It holds every buffer its kernels' arguments name, so that none is released while it may run.
    `out_hosts` and `out_buffers` are one per output memory; `result_type` shapes what `download` returns.
    """

    device: object
    kernels: list
    uploads: list
    out_hosts: list
    out_buffers: list
    buffers: dict
    result_type: Type

    def upload(self) -> float:
        cl = runtime._cl()
        _, queue = runtime.context_and_queue(self.device)
        events = [cl.enqueue_copy(queue, buf, data, is_blocking=False) for buf, data in self.uploads]
        if events:
            cl.wait_for_events(events)
        return sum(_elapsed(e) for e in events)

    def launch(self) -> list:
        """Run the kernels in order; their times in milliseconds, from profiling events."""
        cl = runtime._cl()
        _, queue = runtime.context_and_queue(self.device)
        events = [cl.enqueue_nd_range_kernel(queue, kernel, glb, loc) for kernel, glb, loc in self.kernels]
        cl.wait_for_events(events)
        return [_elapsed(e) for e in events]

    def download(self) -> tuple:
        """The result (one array, or a tuple of them as `lift.interpret` gives) and the transfers' ms."""
        cl = runtime._cl()
        _, queue = runtime.context_and_queue(self.device)
        events = [cl.enqueue_copy(queue, host, buf, is_blocking=False)
                  for host, buf in zip(self.out_hosts, self.out_buffers)]
        cl.wait_for_events(events)
        return _result(self.result_type, iter([h.copy() for h in self.out_hosts])), sum(_elapsed(e) for e in events)


def _result(t: Type, outputs):
    """The outputs, in order, arranged as the result type's tuples of arrays (see `output_types`)."""
    if is_storable(t) or not isinstance(t, TupleType):
        return next(outputs)
    return tuple(_result(e, outputs) for e in t.elems)


def _elapsed(event) -> float:
    return (event.profile.end - event.profile.start) * 1e-6


def compile(program: Lambda, device=None, sizes: Optional[Mapping[str, int]] = None, name: str = "lift",
            launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None,
            lowering: Lowering = None, tuned: Optional[Tuned] = None) -> CompiledProgram:
    """Compile a program for an OpenCL device (see `CompiledProgram`); with `in_place`, the result
    overwrites that input array on the device, as BLAS's `x := a x` (`lift.opencl_gen.in_place`).

    `lowering` (`lift.rules.lowering_choice`): None compiles a lowered program as it is and lowers a high-level
    one with the default lowering (`lift.rules.default_lowering`, chosen per size binding); `"default"`,
    `"tuned"` (the tuning database's winner, else the one `lift explore` wrote in `lift-out/<name>/`), a
    `Derivation` or the path of a `.derivation.json` file (or of its folder) choose explicitly;
    `tuned` gives the tuning database's known lowerings (`lift.explore.tuned_compile`, which `lift.compile` is); the
    default lowering vectorises where the device's native vector width for floats says so."""
    device = device if device is not None and not isinstance(device, str) else runtime.select_device(device)
    return CompiledProgram(program, device, sizes, name, launch, in_place,
                           lowering_for(program, lowering, name, tuned, device.native_vector_width_float))
