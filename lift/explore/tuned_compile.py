"""`lift.compile`: a program compiled for a device with the best lowering its user's searches found.

`lift.opencl_gen.compiled.compile` compiles with the lowering it is given (`lift.rules.lowering_choice`);
this entry point, one layer up, adds what only `lift explore` knows: the tuning database's winners for the
program on the chosen device (`KnownLowerings`), so that with `lowering=None` a high-level program gets
the explored winner for its sizes where one applies, and the default lowering elsewhere.
"""

from __future__ import annotations

import json
from typing import Mapping, Optional

from lift.explore.candidate import program_key
from lift.explore.tuning_database import TuningDatabase
from lift.ir.nodes import Lambda
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import CompiledProgram
from lift.opencl_gen.compiled import compile as compile_lowered
from lift.opencl_gen.launch import Launch
from lift.rules.derivation import Derivation
from lift.rules.lowering_choice import Lowering


class KnownLowerings:
    """The derivations the tuning database holds for `program` on the device labelled `device`, best first
    (`lift.rules.lowering_choice.Tuned`), each with the work-group size it was measured at (`local_size`)."""

    def __init__(self, program: Lambda, device: str, store: Optional[TuningDatabase] = None):
        self.store = store or TuningDatabase()
        self.program, self.device = program_key(program), device

    @property
    def empty(self) -> bool:
        return not any(r.ok and r.derivation and r.device == self.device for r in self.store.records(self.program))

    def derivations(self, sizes: Mapping[str, int]) -> list:
        return [Derivation.from_json(json.dumps({"sizes": dict(r.sizes), "steps": list(r.derivation),
                                                 "params": dict(r.params)}, default=str))
                for r in self.store.ranked(self.program, self.device, sizes)]


def compile(program: Lambda, device=None, sizes: Optional[Mapping[str, int]] = None, name: str = "lift",
            launch: Optional[Mapping[int, Launch]] = None, in_place: Optional[str] = None,
            lowering: Lowering = None, context=None, queue=None, allocator=None) -> CompiledProgram:
    """Compile `program` for an OpenCL device (`lift.opencl_gen.compiled.compile`), lowered by the tuning
    database's winner for its sizes on that device where `lowering` is None or `"tuned"` and one applies
    (`lift.rules.lowering_choice`)."""
    target = runtime.target(device, context, queue)
    tuned = KnownLowerings(program, runtime.device_label(target.device)) if lowering in (None, "tuned") else None
    return compile_lowered(program, target.device, sizes, name, launch, in_place, lowering, tuned=tuned,
                           context=target.context, queue=target.queue, allocator=allocator)
