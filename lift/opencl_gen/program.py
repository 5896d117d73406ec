"""The generator's result: kernels (C AST bodies, memories, launches) and the program around them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from lift.ir.nodes import FunCall
from lift.ir.typecheck import TypedProgram
from lift.opencl_gen import c_ast as C
from lift.opencl_gen.launch import Launch
from lift.opencl_gen.memory import INPUT, OUTPUT, TEMPORARY


@dataclass
class Kernel:
    """One generated kernel: its name, launch, body (C statements), the global memories it reads or writes
    (`memories`, by name), its local memories, the free sizes it takes as arguments, and `expr`, the
    top-level computation it computes (a call of an OpenCL pattern, typed; the cost model reads it)."""

    name: str
    launch: Launch
    body: tuple = ()
    memories: dict = field(default_factory=dict)
    locals: list = field(default_factory=list)
    size_params: tuple = ()
    expr: Optional[FunCall] = None

    @property
    def params(self) -> list:
        """The kernel's memory parameters: inputs, outputs, then temporaries, each in creation order."""
        order = {INPUT: 0, OUTPUT: 1, TEMPORARY: 2}
        mems = [m for m in self.memories.values() if m.kind in order]
        return sorted(mems, key=lambda m: (order[m.kind], m.serial))

    @property
    def lines(self) -> list:
        """The body as lines of C."""
        return C.render(self.body)


@dataclass
class GeneratedProgram:
    """The OpenCL C of a program, its kernels in launch order and the buffers between them.

    `outputs` has one memory per component of a result that is a tuple of arrays (in order, depth
    first), else the result's one memory (`lift.opencl_gen.memory.output_types`).
    """

    name: str
    source: str
    kernels: list
    inputs: list
    outputs: list
    temporaries: list
    typed: TypedProgram
    sizes: dict
    free_sizes: tuple
    index: str = "int"
    """The C type of indices and size arguments (`lift.opencl_gen.index_width`)."""
