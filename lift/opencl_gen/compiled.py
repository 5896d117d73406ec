"""`lift.compile`: a lowered expression as a callable program on an OpenCL device.

Calling the program binds the sizes from its inputs' shapes, checks them against the expression's
constraints and the launch against the device (once per shapes), and runs the kernels in order through
the host runner (`lift.opencl_gen.runner`). Inputs are numpy arrays (uploaded) or `pyopencl.array.Array`s
on the program's context (used where they are); the result is a `pyopencl.array.Array` when an input is
one or `out=` is one, else numpy, as `lift.interpret` gives it but with numpy's shapes
(`lift.ir.binding.result_shape`: a full reduction is 0-d); a tuple of arrays for a program with several
outputs. Buffers come from a memory pool kept across calls (`lift.opencl_gen.runtime.memory_pool`). `time`
measures the kernels alone with profiling events (median of `k` runs) and the transfers separately.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable, Mapping, Optional

import numpy as np

from lift.errors import LiftCodegenError, LiftDeviceError, LiftTypeError
from lift.ir.binding import bind_sizes, result_shape, to_host
from lift.ir.nodes import Lambda
from lift.ir.typecheck import infer
from lift.opencl_gen import runtime
from lift.opencl_gen.index_width import INT, array_lengths, index_type
from lift.opencl_gen.kernels import GeneratedProgram, generate
from lift.opencl_gen.launch import Launch, fitting_overrides
from lift.opencl_gen.manifest import manifest
from lift.opencl_gen.memory import is_storable, output_types
from lift.opencl_gen.runner import Run, RunPlan, allocate, check_device, elapsed_ms, kernels_of, make_plan, upload
from lift.rules.lowering_choice import LoweredProgram, Lowering, Tuned, lowering_for
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


@dataclass(frozen=True)
class _Specialised:
    """The program for one set of input shapes: its run plan, built kernels, parameters and results' shapes."""

    plan: RunPlan
    kernels: dict
    params: tuple
    result_type: Type
    shapes: tuple


class CompiledProgram:
    """A program generated for one device; sizes left unbound are specialised per input shape.

    `device`, `context` and `queue` say where it runs (`lift.opencl_gen.runtime.target`: a user's PyOpenCL
    context and queue, or lift's own); `allocator` (bytes → buffer; by default a `pyopencl.tools.MemoryPool` of
    the program's own, kept across calls) gives the outputs, temporaries and uploaded inputs their buffers."""

    def __init__(self, program: Lambda, device=None, sizes: Optional[Mapping[str, int]] = None,
                 name: str = "lift", launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None,
                 lowering: Optional[Callable[[dict], LoweredProgram]] = None, context=None, queue=None,
                 allocator=None):
        self.program = program
        self.lowering = lowering
        self.in_place = in_place
        self.target = runtime.target(device, context, queue)
        self.device, self.context, self.queue = self.target.device, self.target.context, self.target.queue
        self.allocator = allocator if allocator is not None else runtime.memory_pool(self.queue)
        self.name = name
        self.sizes = dict(sizes or {})
        self.launch = dict(launch or {})
        self._generated: dict = {}
        self._built: dict = {}
        self._specialised: dict = {}

    def generated(self, sizes: Optional[Mapping[str, int]] = None) -> GeneratedProgram:
        """The generated program for a size binding (the compile-time sizes by default)."""
        key = tuple(sorted((sizes or self.sizes).items()))
        if key not in self._generated:
            self._generated[key] = self._generate(dict(key))
        return self._generated[key]

    def _generate(self, sizes: dict) -> GeneratedProgram:
        lowered = LoweredProgram(self.program) if self.lowering is None else self.lowering(sizes)
        return generate_lowered(lowered, self.name, sizes, self.device, self.launch, self.in_place)

    def lowered(self, sizes: Optional[Mapping[str, int]] = None) -> Lambda:
        """The lowered program the kernels are generated from, for a size binding (`lowering`)."""
        return self.program if self.lowering is None else self.lowering(dict(sizes or self.sizes)).program

    @property
    def source(self) -> str:
        return self.generated().source

    @property
    def manifest(self) -> dict:
        return manifest(self.generated())

    def generated_for(self, *inputs) -> GeneratedProgram:
        """The generated program that a call on `inputs` runs (its `.source`; `manifest` of it): a high-level
        program is lowered for the sizes its inputs bind, where `source` and `manifest` show the lowering at the
        compile-time sizes (symbolic where none were given)."""
        return self._bound(inputs)[2]

    def _bound(self, inputs: tuple) -> tuple:
        """`(typed program, size binding, generated program)` for a call on `inputs`, the sizes checked."""
        typed = infer(self.program)
        bound = bind_sizes(typed.param_types, inputs, [p.name for p in typed.expr.params], self.sizes)
        typed.check_sizes(bound)
        try:
            g = self.generated(self.sizes if self.lowering is None else bound)
        except LiftCodegenError:
            g = self.generated(bound)
        if g.index == INT and index_type(array_lengths(g.typed.expr), bound, f"program {self.name}") != INT:
            g = self.generated(bound)  # sizes beyond what the kernels were generated for: 64-bit indices
        return typed, bound, g

    def _for_shapes(self, inputs: tuple) -> _Specialised:
        """The program specialised for the inputs' shapes, checked against the device (made once per shapes)."""
        key = tuple(np.shape(v) for v in inputs)
        found = self._specialised.get(key)
        if found is not None:
            return found
        typed, bound, g = self._bound(inputs)
        plan = make_plan(g, bound)
        check_device(plan, self.device)
        if id(g) not in self._built:
            self._built[id(g)] = kernels_of(runtime.build(g.source, self.device, context=self.context))
        shapes = tuple(result_shape(t, bound) for t in output_types(typed.type))  # the type before sizes are bound
        found = _Specialised(plan, self._built[id(g)], tuple(typed.expr.params), typed.type, shapes)
        self._specialised[key] = found
        return found

    def __call__(self, *inputs, out=None):
        """Run the program (see the module docstring); `out` (an array, or a tuple of arrays for several outputs,
        numpy or PyOpenCL, of the result's shapes and dtypes) receives the result, which is then returned."""
        s = self._for_shapes(inputs)
        arguments, uploads, waits = self._arguments(s, inputs)
        targets = self._out(s, out)
        given = [t.data if _on_device(t) else None for t in targets]
        outputs, slots = allocate(s.plan, self.allocator, arguments, given)
        upload(self.queue, uploads)
        run = Run(s.plan, s.kernels, self.queue, arguments, outputs, slots)
        events = run.enqueue(waits)
        if targets:
            results = targets
        elif any(_on_device(v) for v in inputs):
            results = self._device_results(s, inputs, outputs)
        else:
            results = [np.empty(shape, m.dtype) for m, shape in zip(s.plan.outputs, s.shapes)]
        for r in results:
            if _on_device(r) and events:
                r.add_event(events[-1])
        run.download([None if _on_device(r) else r.reshape(m.shape) for r, m in zip(results, s.plan.outputs)])
        return _result(s.result_type, iter(results))

    def _arguments(self, s: _Specialised, inputs: tuple, allocator: Optional[Callable] = None) -> tuple:
        """The kernels' inputs by position (a buffer or a scalar), the uploads of numpy arrays (to buffers from
        `allocator`, the program's by default), and the events the device arrays given wait on."""
        arguments, uploads, waits = [], [], []
        for p, op, value in zip(s.params, s.plan.inputs, inputs):
            if _on_device(value):
                _check_device_array(value, op, self.context, f"input {p.name}")
                if op.scalar:
                    arguments.append(value.get()[()])
                else:
                    arguments.append(value.data)
                    waits += value.events
                continue
            data = to_host(value, p.t, p.name)
            if op.scalar:
                arguments.append(np.asarray(data, op.dtype).reshape(())[()])
            else:
                buffer = (allocator or self.allocator)(max(op.nbytes, 1))
                uploads.append((buffer, np.ascontiguousarray(data)))
                arguments.append(buffer)
        return arguments, uploads, waits or None

    def _out(self, s: _Specialised, out) -> list:
        """The arrays of `out`, one per output, checked against the result's shapes and dtypes."""
        if out is None:
            return []
        targets = _flatten(s.result_type, out)
        if len(targets) != len(s.plan.outputs):
            raise LiftTypeError(f"out= should give {len(s.plan.outputs)} array(s), one per output, got {len(targets)}")
        for i, (t, op, shape) in enumerate(zip(targets, s.plan.outputs, s.shapes)):
            where = "out" if len(targets) == 1 else f"out[{i}]"
            if op.overwrites is not None:
                raise LiftTypeError(f"{where}: the result overwrites input {s.params[op.overwrites].name} "
                                    f"(compiled with in_place), it takes no out=")
            if _on_device(t):
                _check_device_array(t, op, self.context, where)
            elif not isinstance(t, np.ndarray) or not t.flags.c_contiguous or not t.flags.writeable:
                raise LiftTypeError(f"{where} should be a writeable C-contiguous numpy or pyopencl array, got "
                                    f"{type(t).__name__}")
            if t.shape != shape or t.dtype != op.dtype:
                raise LiftTypeError(f"{where} should have shape {shape} and dtype {op.dtype}, got shape {t.shape} "
                                    f"and dtype {t.dtype}")
        return targets

    def _device_results(self, s: _Specialised, inputs: tuple, outputs: list) -> list:
        """The outputs as PyOpenCL arrays of the results' shapes (an input's own, for a result written over it)."""
        results = []
        for m, buffer, shape in zip(s.plan.outputs, outputs, s.shapes):
            given = inputs[m.overwrites] if m.overwrites is not None else None
            results.append(given.reshape(shape) if _on_device(given)
                           else _device_array()(self.queue, shape, m.dtype, data=buffer))
        return results

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
                      tuple(median(t[k] for t in per_kernel) for k in range(len(run.plan.kernels))), repeat)

    def prepare(self, *inputs) -> "PreparedRun":
        """Kernel arguments for these inputs, checked against the device, ready to launch, on new buffers (not the
        pool's: the benchmarks time runs on several placements of the buffers in memory)."""
        cl = runtime._cl()
        if not self.queue.properties & cl.command_queue_properties.PROFILING_ENABLE:
            raise LiftDeviceError("timing needs a command queue with profiling enabled "
                                  "(pyopencl.command_queue_properties.PROFILING_ENABLE)")
        s = self._for_shapes(inputs)
        fresh = partial(cl.Buffer, self.context, cl.mem_flags.READ_WRITE)
        arguments, uploads, _ = self._arguments(s, inputs, fresh)
        return PreparedRun(Run(s.plan, s.kernels, self.queue, arguments, *allocate(s.plan, fresh, arguments)),
                           uploads, s.result_type, s.shapes)


@dataclass
class PreparedRun:
    """A program bound to its inputs on the device: upload, launch the kernels, download; each timed.

    `uploads` are the numpy inputs' `(buffer, array)` pairs; `shapes` the results' numpy shapes, and
    `result_type` their arrangement, as `download` returns them."""

    run: Run
    uploads: list
    result_type: Type
    shapes: tuple

    @property
    def plan(self) -> RunPlan:
        return self.run.plan

    @property
    def device(self):
        return self.run.queue.device

    @property
    def out_buffers(self) -> list:
        return self.run.outputs

    @property
    def buffers(self) -> dict:
        """Every buffer the kernels' arguments name, by memory name."""
        plan, run = self.run.plan, self.run
        return {**{m.name: b for m, b in zip(plan.inputs, run.inputs) if not m.scalar},
                **{name: run.slots[slot] for name, slot, _ in plan.temporaries},
                **{m.name: b for m, b in zip(plan.outputs, run.outputs)}}

    def upload(self) -> float:
        """Copy the numpy inputs to the device; the transfers' milliseconds."""
        return elapsed_ms(upload(self.run.queue, self.uploads))

    def launch(self) -> tuple:
        """Run the kernels in order; their times in milliseconds, from profiling events."""
        return self.run.launch()

    def download(self) -> tuple:
        """The result (one array, or a tuple of them as `lift.interpret` gives, in numpy's shapes) and the
        transfers' milliseconds."""
        hosts, events = self.run.download()
        return _result(self.result_type, iter([h.reshape(s) for h, s in zip(hosts, self.shapes)])), elapsed_ms(events)


def _on_device(value) -> bool:
    return isinstance(value, _device_array())


@lru_cache(maxsize=1)
def _device_array() -> type:
    """`pyopencl.array.Array`, imported on first use (PyOpenCL is needed only to run programs)."""
    runtime._cl()
    from pyopencl.array import Array

    return Array


def _check_device_array(array, op, context, where: str) -> None:
    if array.context != context:
        raise LiftDeviceError(f"{where} is a pyopencl array of another context than the program's")
    if array.dtype != op.dtype:
        raise LiftTypeError(f"{where} should have dtype {op.dtype}, got a pyopencl array of dtype {array.dtype}")
    if not array.flags.c_contiguous or array.offset:
        raise LiftTypeError(f"{where} should be a C-contiguous pyopencl array without offset (a copy is one)")


def _flatten(t: Type, value) -> list:
    """Arrays given as `t`'s result arranges them (`_result`), in output order."""
    if is_storable(t) or not isinstance(t, TupleType):
        return [value]
    if not isinstance(value, (tuple, list)) or len(value) != len(t.elems):
        raise LiftTypeError(f"out= should be a tuple of {len(t.elems)} arrays, as the result of type {t}")
    return [a for e, v in zip(t.elems, value) for a in _flatten(e, v)]


def _result(t: Type, outputs):
    """The outputs, in order, arranged as the result type's tuples of arrays (see `output_types`)."""
    if is_storable(t) or not isinstance(t, TupleType):
        return next(outputs)
    return tuple(_result(e, outputs) for e in t.elems)


def generate_lowered(lowered: LoweredProgram, name: str, sizes: Mapping[str, int], device=None,
                     launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None) -> GeneratedProgram:
    """The kernels of a lowered program for `sizes`, launched at the work-group size its derivation was measured at
    (`LoweredProgram.local_size`) where no `launch` is given and `device` can run it at these sizes
    (`fitting_overrides`, the rule `lift explore` kept it by), else as the generator leaves them (the driver's)."""
    g = generate(lowered.program, name, sizes, launch, in_place)
    if launch or lowered.local_size is None or device is None:
        return g
    overrides = fitting_overrides(g.kernels, lowered.local_size, sizes, device.max_work_group_size,
                                  tuple(device.max_work_item_sizes))
    return generate(lowered.program, name, sizes, overrides, in_place) if overrides else g


def compile(program: Lambda, device=None, sizes: Optional[Mapping[str, int]] = None, name: str = "lift",
            launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None,
            lowering: Lowering = None, tuned: Optional[Tuned] = None, context=None, queue=None,
            allocator=None) -> CompiledProgram:
    """Compile a program for an OpenCL device (see `CompiledProgram`: `device`, or a user's PyOpenCL `context`
    and `queue`, and an `allocator` of buffers); with `in_place`, the result overwrites that input array on
    the device, as BLAS's `x := a x` (`lift.opencl_gen.in_place`).

    `lowering` (`lift.rules.lowering_choice`): None compiles a lowered program as it is and lowers a high-level
    one with the default lowering (`lift.rules.default_lowering`, chosen per size binding); `"default"`,
    `"tuned"` (the tuning database's winner, else the one `lift explore` wrote in `lift-out/<name>/`), a
    `Derivation` or the path of a `.derivation.json` file (or of its folder) choose explicitly;
    `tuned` gives the tuning database's known lowerings (`lift.explore.tuned_compile`, which `lift.compile` is); the
    default lowering vectorises where the device's native vector width for floats says so."""
    where = runtime.target(device, context, queue)
    return CompiledProgram(program, where.device, sizes, name, launch, in_place,
                           lowering_for(program, lowering, name, tuned, where.device.native_vector_width_float),
                           where.context, where.queue, allocator)
