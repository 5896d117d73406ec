"""Which lowering `lift.compile` applies to a program: none, the default one, the tuned one, or a given one.

`lowering` is one of
- None: a program already lowered compiles as it is; one with high-level patterns gets the default lowering;
- `"default"`: the default lowering (`lift.rules.default_lowering`), chosen per size binding;
- `"tuned"`: the winner `lift explore` wrote for the kernel, `lift-out/<kernel>/<kernel>.derivation.json`
  (a per-user tuning database keyed by program and device is later work: today it is explore's output folder);
- a `Derivation`, or the path of a `.derivation.json` file, or of a folder holding `<kernel>.derivation.json`:
  that derivation, replayed on the program.

`lowering_for` turns the choice into a function from a size binding to the lowered program (None where the
program compiles as it is); every lowering is made of rules, so the lowered program means what the program means.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Optional, Union

from lift.errors import LiftError
from lift.ir import patterns as P
from lift.ir.nodes import Lambda, Node
from lift.rules.default_lowering import LoweringError, lower
from lift.rules.derivation import Derivation
from lift.rules.rule import RuleNotApplicable

TUNED_ROOT = Path("lift-out")

Lowering = Union[None, str, Path, Derivation]


def is_lowered(program: Lambda) -> bool:
    """Whether no high-level pattern is left in `program`."""
    def high(node) -> bool:
        if P.is_high_level(node):
            return True
        return any(high(c) for _, c in node.children() if isinstance(c, Node))

    return not high(program)


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


def lowering_for(program: Lambda, lowering: Lowering, kernel: str) -> Optional[Callable[[dict], Lambda]]:
    """A function from a size binding to `program` lowered as `lowering` says (module docstring); None where
    `program` compiles as it is."""
    if lowering is None:
        return None if is_lowered(program) else (lambda sizes: lower(program, sizes))
    if isinstance(lowering, str) and lowering == "default":
        return lambda sizes: lower(program, sizes)
    if isinstance(lowering, str) and lowering == "tuned":
        lowering = TUNED_ROOT / kernel
    if isinstance(lowering, (str, Path)):
        where = str(derivation_file(Path(lowering), kernel))
        lowering = read_derivation(Path(lowering), kernel)
    elif isinstance(lowering, Derivation):
        where = "given"
    else:
        raise LiftError(f"lowering={lowering!r}: expected 'default', 'tuned', a Derivation or the path of a "
                        f".derivation.json file")
    result = replayed(lowering, program, where)
    return lambda sizes: result
