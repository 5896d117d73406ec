"""Which lowering `lift.compile` applies to a program: none, the default one, the tuned one, or a given one.

`lowering` is one of
- None: a program already lowered compiles as it is; one with high-level patterns gets the tuned lowering
  where the tuning database knows one for its sizes and device, else the default lowering;
- `"default"`: the default lowering (`lift.rules.default_lowering`), chosen per size binding;
- `"tuned"`: the tuning database's winner for the program's sizes and device, else the winner `lift explore`
  wrote for the kernel in `lift-out/<kernel>/<kernel>.derivation.json`, else one clear error;
- a `Derivation`, or the path of a `.derivation.json` file, or of a folder holding `<kernel>.derivation.json`:
  that derivation, replayed on the program.

The tuning database belongs to `lift explore`, a layer above this one: its caller passes it in as `tuned`,
the known derivations for a size binding, best first (`Tuned`, `lift.explore.tuned_compile`). A known derivation is used only where it replays on the program and its
divisibility constraints hold at the sizes (one tuned at other sizes of the same size class may not).

`lowering_for` turns the choice into a function from a size binding to the lowered program (None where the
program compiles as it is); every lowering is made of rules, so the lowered program means what the program means.
A tuned or given derivation carries the work-group size `lift explore` measured it at (`Derivation.local_size`),
which the lowered program keeps for its launch (`LoweredProgram`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable, Mapping, NamedTuple, Optional, Protocol, Union

from lift.errors import LiftError, LiftSizeError
from lift.ir import patterns as P
from lift.ir.nodes import FunCall, Lambda
from lift.ir.typecheck import infer
from lift.rules.default_lowering import LANES, LoweringError, lower
from lift.rules.derivation import Derivation
from lift.rules.rule import RuleNotApplicable
from lift.rules.simplification import view_of_inputs

TUNED_ROOT = Path("lift-out")

Lowering = Union[None, str, Path, Derivation]


class LoweredProgram(NamedTuple):
    """A lowered program, and the work-group size of its kernels that the generator leaves to the driver that its
    derivation was measured at (None: the driver's choice; `lift.opencl_gen.compiled.generate_lowered`)."""

    program: Lambda
    local_size: Optional[int] = None


class Tuned(Protocol):
    """The tuning database's derivations of one program on one device (`lift.explore.tuned_compile`)."""

    @property
    def empty(self) -> bool:
        """Whether it knows no derivation at all, at any sizes."""

    def derivations(self, sizes: Mapping[str, int]) -> Iterable[Derivation]:
        """The known derivations for `sizes`, best first."""


def is_lowered(program: Lambda) -> bool:
    """Whether no high-level pattern is left in `program`, and it computes its result: one that only rearranges its
    inputs (`transpose ∘ map(transpose)`) is copied by the default lowering (`copy-view`)."""
    return not any(P.is_high_level(n) for n in program.subterms()) and not (
        isinstance(program.body, FunCall) and view_of_inputs(program.body))


def derivation_file(path: Path, kernel: str) -> Path:
    """The derivation file at `path`: the `.json` file itself, or `<kernel>.derivation.json` in the folder `path`."""
    return path if path.suffix == ".json" else path / f"{kernel}.derivation.json"


def read_derivation(path: Path, kernel: str) -> Derivation:
    file = derivation_file(Path(path), kernel)
    if not file.is_file():
        raise LoweringError(f"no derivation for kernel {kernel!r} at {file} (run `lift explore` on it first, "
                            f"or give lowering='default')")
    try:
        return Derivation.from_json(file.read_text())
    except (ValueError, KeyError, TypeError) as e:
        raise LoweringError(f"{file}: not a derivation ({e})") from None


def replayed(derivation: Derivation, program: Lambda, where: str) -> Lambda:
    try:
        result = derivation.replay(program)
    except RuleNotApplicable as e:
        raise LoweringError(f"the derivation {where} does not apply to this program: {e}") from None
    if not is_lowered(result):
        raise LoweringError(f"the derivation {where} leaves high-level patterns in the program")
    return result


def tuned_lowering(program: Lambda, tuned: Optional[Tuned],
                   sizes: Mapping[str, int]) -> Optional[LoweredProgram]:
    """`program` lowered by the best known derivation that applies at `sizes`, with its work-group size, or None
    where none does."""
    for derivation in (tuned.derivations(sizes) if tuned is not None else ()):
        try:
            lowered = derivation.replay(program)
            if is_lowered(lowered):
                infer(lowered).check_sizes(dict(sizes))
                return LoweredProgram(lowered, derivation.local_size)
        except (RuleNotApplicable, LiftSizeError):
            continue
    return None


def lowering_for(program: Lambda, lowering: Lowering, kernel: str, tuned: Optional[Tuned] = None,
                 vector_width: int = LANES) -> Optional[Callable[[dict], LoweredProgram]]:
    """A function from a size binding to `program` lowered as `lowering` says (module docstring); None where
    `program` compiles as it is. `tuned` gives the tuning database's derivations (module docstring);
    `vector_width` is the device's native vector width, which decides whether the default lowering vectorises."""
    if lowering is None:
        if is_lowered(program):
            return None
        return lambda sizes: (tuned_lowering(program, tuned, sizes)
                              or LoweredProgram(lower(program, sizes, vector_width)))
    if isinstance(lowering, str) and lowering == "default":
        return lambda sizes: LoweredProgram(lower(program, sizes, vector_width))
    if isinstance(lowering, str) and lowering == "tuned":
        folder = TUNED_ROOT / kernel
        explored = derivation_file(folder, kernel).is_file() or tuned is None or tuned.empty
        fallback = lowering_for(program, folder, kernel) if explored else (lambda sizes: _no_tuned(kernel, sizes))
        return lambda sizes: tuned_lowering(program, tuned, sizes) or fallback(sizes)
    if isinstance(lowering, (str, Path)):
        where = str(derivation_file(Path(lowering), kernel))
        lowering = read_derivation(Path(lowering), kernel)
    elif isinstance(lowering, Derivation):
        where = "given"
    else:
        raise LiftError(f"lowering={lowering!r}: expected 'default', 'tuned', a Derivation or the path of a "
                        f".derivation.json file")
    result = LoweredProgram(replayed(lowering, program, where), lowering.local_size)
    return lambda sizes: result


def _no_tuned(kernel: str, sizes: Mapping[str, int]) -> LoweredProgram:
    bound = ", ".join(f"{k}={v}" for k, v in sizes.items())
    raise LoweringError(f"no tuned lowering for kernel {kernel!r} at {bound} on this device: none that the tuning "
                        f"database knows applies at these sizes (run `lift explore` at them, or give lowering='default')")
