"""Run plans: what the device worker needs to run a generated program, as plain data.

Lift programs do not cross process boundaries (user functions hold numpy closures), so the explorer
generates each candidate's code itself and sends the worker a plan: the OpenCL C source, the buffers
to allocate, and each kernel's arguments and launch sizes, all evaluated under the bound sizes. The
worker keeps the program's inputs on the device and refers to them by position.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from lift.ir.binding import host_dtype, host_shape
from lift.opencl_gen.index_width import DTYPES
from lift.opencl_gen.kernels import GeneratedProgram
from lift.opencl_gen.memory import INPUT, OUTPUT, memory_bytes, output_types

INPUT_ARG, OUTPUT_ARG, BUFFER_ARG, INT_ARG = "input", "output", "buffer", "int"


@dataclass(frozen=True)
class KernelRun:
    """One kernel launch: `args` are `(kind, value)` pairs (an input position, a buffer name, a size as a numpy
    integer of the program's index type, `lift.opencl_gen.index_width`)."""

    name: str
    args: tuple
    global_size: tuple
    local_size: tuple | None
    local_bytes: int


@dataclass(frozen=True)
class RunPlan:
    """A generated program ready to run: source, temporary buffers (name, bytes), kernels in order, results.

    `outputs` are `(name, shape, dtype)`, one per output memory in order (several for a tuple of arrays).
    """

    source: str
    kernels: tuple
    temporaries: tuple
    outputs: tuple


def make_plan(g: GeneratedProgram, sizes: Mapping[str, int]) -> RunPlan:
    """The run plan of a program generated with every size bound in `sizes`."""
    position = {p.name: i for i, p in enumerate(g.typed.expr.params)}
    kernels = []
    for k in g.kernels:
        args = []
        for m in k.params:
            if m.kind == INPUT:
                args.append((INPUT_ARG, position[m.name]))
            elif m.kind == OUTPUT:
                args.append((OUTPUT_ARG, m.name))
            else:
                args.append((BUFFER_ARG, m.name))
        args += [(INT_ARG, DTYPES[g.index](sizes[s])) for s in k.size_params]
        glb, loc = k.launch.evaluate(sizes)
        kernels.append(KernelRun(k.name, tuple(args), glb, loc, sum(memory_bytes(m, sizes) for m in k.locals)))
    temporaries = tuple((m.name, memory_bytes(m, sizes)) for m in g.temporaries)
    outputs = tuple((m.name, host_shape(t, sizes), host_dtype(t))
                    for m, t in zip(g.outputs, output_types(g.typed.type)))
    return RunPlan(g.source, tuple(kernels), temporaries, outputs)
