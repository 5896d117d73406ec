"""The problem `lift explore` solves: a kernel of a program file at bound sizes, with its inputs and reference.

`Problem.prepare` computes the reference output once (the interpreter on the high-level program), at a smaller
size of it when the explored size would take too long (`lift.explore.reference`); `Problem.save` writes the
inputs, reference and tolerance for the device workers (`lift.explore.worker`). Before anything is allocated,
`check_host_memory` refuses sizes whose inputs and reference do not fit in the host's available memory.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping, Optional

import numpy as np

from lift.explore.evaluation import RTOL
from lift.explore.reference import choose_reference
from lift.files import replace_with
from lift.ir.binding import to_host
from lift.ir.footprint import array_bytes, available_host_bytes, check_fits
from lift.ir.nodes import Lambda
from lift.ir.program_file import ProgramFile
from lift.ir.typecheck import infer
from lift.opencl_gen.memory import output_types


@dataclass(frozen=True)
class Problem:
    """The program explored: its high-level kernel, bound sizes, host inputs and reference output.

    `reference` is what `lift.interpret` returns: one array, or a tuple of them for several outputs; None
    when candidates are checked on `check`, the same program at smaller sizes, as `verified` says.
    """

    kernel: str
    program: Lambda
    sizes: Mapping[str, int]
    inputs: tuple
    reference: np.ndarray | tuple | None
    check: Optional["Problem"] = None
    verified: Optional[str] = None
    rtol: float = RTOL
    atol: float = 0.0

    @classmethod
    def prepare(cls, pf: ProgramFile, kernel: Optional[str], sizes: Optional[Mapping[str, int]],
                seed: int, reference_limit_s: float = math.inf, rtol: Optional[float] = None,
                atol: Optional[float] = None) -> "Problem":
        """The problem of `kernel` at `sizes`; its reference at smaller sizes when it would take over
        `reference_limit_s`; its outputs are checked with `rtol` and `atol` where given, else with the program
        file's `TOLERANCE`, else with `RTOL` of the output's magnitude."""
        name, program = pf.kernel(kernel)
        tolerance = {"rtol": RTOL, "atol": 0.0, **pf.tolerance_of(name)}
        tolerance.update({k: v for k, v in (("rtol", rtol), ("atol", atol)) if v is not None})
        bound = pf.bind(sizes)
        check_host_memory(program, bound)
        tol = (float(tolerance["rtol"]), float(tolerance["atol"]))
        choice = choose_reference(program, lambda at: pf.inputs(name, at, seed), bound, reference_limit_s)
        if not choice.smaller:
            return cls._at(name, program, bound, choice.inputs, choice.output, tol)
        check = cls._at(name, program, choice.sizes, choice.inputs, choice.output, tol)
        return replace(cls._at(name, program, bound, pf.inputs(name, bound, seed), None, tol), check=check,
                       verified=choice.note())

    @classmethod
    def _at(cls, name: str, program: Lambda, sizes: Mapping[str, int], inputs: list, reference,
            tolerance: tuple) -> "Problem":
        typed = infer(program)
        host = tuple(np.asarray(to_host(v, p.t, p.name)) for v, p in zip(inputs, typed.expr.params))
        return cls(name, program, sizes, host, reference if isinstance(reference, tuple) or reference is None
                   else np.asarray(reference), rtol=tolerance[0], atol=tolerance[1])

    @property
    def param_types(self) -> tuple:
        return infer(self.program).param_types

    @property
    def useful_bytes(self) -> int:
        """The bytes any implementation must move: the inputs read once and the output written once."""
        outputs = sum(array_bytes(t, self.sizes) for t in output_types(infer(self.program).type))
        return sum(a.nbytes for a in self.inputs) + outputs

    def save(self, path: Path) -> Path:
        """`input_i`, `reference` (or `reference_k` per output; none without a reference) and `tolerance`
        (rtol, atol) in one `.npz` file (`worker._session` reads it)."""
        references = {} if self.reference is None else {"reference": self.reference} \
            if not isinstance(self.reference, tuple) else {f"reference_{k}": r for k, r in enumerate(self.reference)}
        return replace_with(path, lambda f: np.savez(f, **references, tolerance=np.array([self.rtol, self.atol]),
                                                     **{f"input_{i}": a for i, a in enumerate(self.inputs)}))


def check_host_memory(program: Lambda, sizes: Mapping[str, int]) -> None:
    """Refuse, before anything is allocated, a program whose inputs and reference output at `sizes` do not fit
    twice (the explorer and its device worker each hold them) in the host's available memory."""
    typed = infer(program)
    outputs = output_types(typed.type)
    references = [("reference" if len(outputs) == 1 else f"reference {k}", array_bytes(t, sizes))
                  for k, t in enumerate(outputs)]
    arrays = [(p.name, array_bytes(p.t, sizes)) for p in typed.expr.params] + references
    check_fits(arrays, available_host_bytes(), "the host's available memory", copies=2,
               purpose=" (the explorer and its device worker each hold them)")
