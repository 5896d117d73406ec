"""Results written over an input, as BLAS's `x := a x` does: when the generated code allows it.

A caller who no longer needs an input `x` may ask for the result to be written over it
(`compile(scal, in_place="x")`). On a CPU this is worth up to twice the speed of a memory-bound map: a
store to a new buffer first reads its cache line (write-allocate), a store over the line just read
does not. The choice is the caller's, since it destroys `x`; the generator only checks that the code
it emitted for the program stays correct when the two buffers are one:

- every kernel that writes the result writes `x` at one site and reads it at most at one, with the same
  index, width and loop nesting: each element of `x` is then read by the iteration that overwrites it,
  before it does (the value written is computed from the value read; lift's kernels write each element
  of a result once);
- no kernel after the first one that writes reads `x` again.

Anything else (a stencil reading neighbours, a reduction reading `x` after a map overwrote it, a user
function taking the whole array) is refused with the reason. The first criterion (`misalignment`) also
decides whether a sequential fold may update its array accumulator in place (`lift.opencl_gen.folds`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

from lift.errors import LiftCodegenError
from lift.types.arith import ArithExpr


@dataclass(frozen=True)
class Site:
    """One place in kernel `kernel` that reads or writes the in-place buffer, in emission order.

    `index` is None where the whole buffer is handed over (a user function's array argument)."""

    kernel: int
    write: bool
    index: Optional[ArithExpr]
    width: int
    depth: int


def check_in_place(name: str, sites: Sequence[Site]) -> None:
    """Raise `LiftCodegenError` unless writing the result over input `name` keeps the program's meaning."""
    writers = sorted({s.kernel for s in sites if s.write})
    if not writers:
        raise LiftCodegenError(f"the result cannot overwrite input {name}: no kernel writes the result to memory")
    for k in writers:
        reason = misalignment(name, [s for s in sites if s.kernel == k])
        if reason:
            raise LiftCodegenError(f"the result cannot overwrite input {name}: kernel {k} {reason}")
    later = [s.kernel for s in sites if s.kernel > writers[0] and s.kernel not in writers]
    if later:
        raise LiftCodegenError(f"the result cannot overwrite input {name}: kernel {later[0]} reads {name} after "
                               f"kernel {writers[0]} has overwritten it")


def misalignment(name: str, sites: Sequence[Site]) -> Optional[str]:
    """Why the accesses `sites` to memory `name` (one kernel's, or one step of a fold) are not each element
    read then written by the same iteration, or None where they are.

    They are when `name` is written at one site and read at most at one, with the same index, width and loop
    depth: the value written over an element is then computed from that element alone. This is the
    criterion for a result written over an input (`check_in_place`) and for a fold updating its array
    accumulator in place (`lift.opencl_gen.folds`).
    """
    reads = [s for s in sites if not s.write]
    writes = [s for s in sites if s.write]
    if len(writes) != 1 or len(reads) > 1:
        return (f"reads it at {len(reads)} places and writes it at {len(writes)}, not one element read then "
                "written by the same iteration")
    (write,) = writes
    if reads and (reads[0].index is None or
                  (reads[0].index, reads[0].width, reads[0].depth) != (write.index, write.width, write.depth)):
        return f"reads {name} at another element than the one it writes ({_where(reads[0])} vs {_where(write)})"
    return None


def _where(s: Site) -> str:
    return "the whole array" if s.index is None else f"[{s.index}] x{s.width}"
