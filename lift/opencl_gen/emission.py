"""What the emitter has produced so far for one kernel, or for one tentative piece of a kernel."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from lift.opencl_gen.program import HostLoop


@dataclass
class Emission:
    """Statements (`lift.opencl_gen.c_ast`), memories allocated or used, and the accesses to watched
    memories (`(Memory, Site)`, `lift.opencl_gen.in_place`). A tentative piece of code is emitted into an
    `Emission` of its own and merged into its parent's when it is kept (`lift.opencl_gen.folds`)."""

    stmts: list = field(default_factory=list)
    temporaries: list = field(default_factory=list)
    locals: list = field(default_factory=list)
    privates: list = field(default_factory=list)
    memories: dict = field(default_factory=dict)
    sites: list = field(default_factory=list)
    loop: Optional[HostLoop] = None  # where the host launches the kernel repeatedly

    def merge(self, child: "Emission") -> None:
        self.stmts += child.stmts
        self.temporaries += child.temporaries
        self.locals += child.locals
        self.privates += child.privates
        self.memories.update(child.memories)
        self.sites += child.sites
