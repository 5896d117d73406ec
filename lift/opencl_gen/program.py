"""The generator's result: kernels (C AST bodies, memories, launches) and the program around them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Optional

from lift.ir.nodes import FunCall
from lift.ir.typecheck import TypedProgram
from lift.opencl_gen import c_ast as C
from lift.opencl_gen.launch import Launch
from lift.opencl_gen.memory import INPUT, OUTPUT, TEMPORARY, Memory
from lift.types.arith import ArithExpr


@dataclass(frozen=True)
class HostLoop:
    """A kernel the host launches `count` times (`iterate-host`): its parameter `source` is read, `target`
    written; launch `i` reads `first` (i = 0) or the buffer launch `i - 1` wrote, and writes `buffers[0]` where
    `count - 1 - i` is even, else `buffers[1]`, so that the last launch writes `buffers[0]`, the result's memory,
    and no launch writes the buffer it reads or `first` (an input stays as it was)."""

    count: ArithExpr
    source: Memory
    target: Memory
    first: Memory
    buffers: tuple

    def bindings(self, sizes: Mapping[str, int]) -> list:
        """`{parameter: memory}` for `source` and `target` at each launch, in order."""
        n = int(self.count.eval(sizes))
        found, read = [], self.first
        for i in range(n):
            write = self.buffers[(n - 1 - i) % 2]
            found.append({self.source: read, self.target: write})
            read = write
        return found


@dataclass
class Kernel:
    """One generated kernel: its name, launch, body (C statements), the global memories it reads or writes
    (`memories`, by name), its local memories, the free sizes it takes as arguments, and `expr`, the
    top-level computation it computes (a call of an OpenCL pattern, typed; the cost model reads it); `loop`, for
    a kernel the host launches repeatedly (`HostLoop`), the buffers each launch binds; `privates`, the private
    arrays a work-item declares."""

    name: str
    launch: Launch
    body: tuple = ()
    memories: dict = field(default_factory=dict)
    locals: list = field(default_factory=list)
    size_params: tuple = ()
    expr: Optional[FunCall] = None
    loop: Optional[HostLoop] = None
    privates: list = field(default_factory=list)

    @property
    def params(self) -> list:
        """The kernel's memory parameters: inputs, outputs, then temporaries, each in creation order."""
        order = {INPUT: 0, OUTPUT: 1, TEMPORARY: 2}
        mems = [m for m in self.memories.values() if m.kind in order]
        return sorted(mems, key=lambda m: (order[m.kind], m.serial))

    def launches(self, sizes: Mapping[str, int]) -> list:
        """`{parameter: memory}` for each launch under `sizes`, in order: one launch of the parameters themselves
        (`{}`), or a host loop's bindings."""
        return [{}] if self.loop is None else self.loop.bindings(sizes)

    @property
    def buffers(self) -> list:
        """The program's memories its launches bind: its parameters, a host loop's two replaced by the memories
        they take (at its constant count)."""
        bound = self.launches({})
        return list(dict.fromkeys(b.get(m, m) for b in bound for m in self.params))

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
