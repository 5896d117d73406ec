"""The emitter's `iterate-host`: the step's one kernel, which the host launches `n` times over two buffers.

The lowering says where an iteration runs (`lift.rules.iterate`'s `iterate-host`); the emitter follows: the step
`λx. v(c(w(x)))` is emitted once, as the whole kernel, reading its parameter `x` from one kernel argument and
writing its result into another (`HostLoop.source`, `target`). Which buffers they take at each launch is data
(`lift.opencl_gen.program.HostLoop`): the first launch reads the iteration's input, each later one what the
launch before wrote, and the launches alternate between the result's memory and a second buffer of the same
type so that the last one writes the result's memory, whatever the parity of `n`. The runner
(`lift.opencl_gen.runner.make_plan`) and the manifest (`lift.opencl_gen.manifest`) read that data.
"""

from __future__ import annotations

from lift.errors import LiftCodegenError
from lift.ir import patterns as P
from lift.ir.printer import paper
from lift.opencl_gen import views as V
from lift.opencl_gen.address_spaces import GLOBAL
from lift.opencl_gen.memory import TEMPORARY, Memory, element_count, element_type
from lift.opencl_gen.program import HostLoop
from lift.types.types import Type


class HostLoopEmission:
    """The `Emitter`'s method for `iterate-host` (`lift.opencl_gen.emit`)."""

    def call_IterateHost(self, f: P.IterateHost, args: list, t: Type, out, path: str) -> V.View:
        where = f"{paper(f)} at {path}"
        if any(k != "seq-kernel" for k in self.kinds) or self.out.stmts or self.out.loop is not None:
            raise LiftCodegenError(f"{where}: a host loop is a whole kernel (the pass check-lowered checks it)")
        if f.n.value < 1:
            raise LiftCodegenError(f"{where}: a host loop launches its kernel at least once (iterate-zero makes "
                                   "no iteration a copy)")
        (a,) = args
        first, dest = _whole_memory(a, t), _whole_memory(out, t)
        if first is None:
            raise LiftCodegenError(f"{where}: the input must be a whole buffer (an input of the program or the "
                                   "result of a kernel), not a view of one")
        if dest is None or dest is first:
            raise LiftCodegenError(f"{where}: the result must go to a whole buffer other than the input (not in "
                                   "place, nor into a view of the output)")
        other = self.twin(t, GLOBAL, path).mem
        source = Memory(self.fresh("step_in"), GLOBAL, first.elem, first.size, TEMPORARY, readonly=True)
        target = Memory(self.fresh("step_out"), GLOBAL, first.elem, first.size, TEMPORARY)
        self.call(f.f, [V.MemView(source, t)], t, V.MemView(target, t), f"{path}.f")
        self.out.memories.update({source.name: source, target.name: target})
        self.out.loop = HostLoop(f.n, source, target, first, (dest, other))
        return out


def _whole_memory(view, t: Type):
    """The memory `view` is all of, holding a value of `t` row-major; None for a slice or another view."""
    if not isinstance(view, V.MemView) or view.prefix or view.field or view.mem.space != GLOBAL:
        return None
    mem = view.mem
    if element_type(t) != mem.elem or element_count(t) != mem.size:
        return None
    return mem
