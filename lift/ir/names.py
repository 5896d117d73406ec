"""Fresh parameter names, generated per program.

Rules and compositions create parameters (`acc_4`, `x_7`). Parameters compare by name, so a fresh name
must differ from every name of the program it enters; and, so that the rewrite search deduplicates and
kernels come out alike from one run to the next, the names a rewrite gives must depend on the program
rewritten, not on how many names the process made before. `program_names(program)` opens a scope in
which fresh names are numbered on from the highest number the program's names end in (`x_3` in it: the
next name is `hint_4`); the rewrite engine opens one around each rewrite. Outside any scope, while a
program is being written, names come from one sequence per process.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import re
from typing import Iterator

_NUMBERED = re.compile(r"_(\d+)\Z")


class NameGenerator:
    """Names `hint_n` with `n` counting up from `start`, whatever the hint."""

    __slots__ = ("_numbers",)

    def __init__(self, start: int = 0):
        self._numbers = itertools.count(start)

    def fresh(self, hint: str) -> str:
        return f"{hint}_{next(self._numbers)}"


_process_names = NameGenerator()
_program_names: contextvars.ContextVar = contextvars.ContextVar("lift_program_names", default=None)


def fresh_name(hint: str) -> str:
    """A name for a new parameter: from the innermost `program_names` scope, else from the process's sequence."""
    return (_program_names.get() or _process_names).fresh(hint)


@contextlib.contextmanager
def program_names(program) -> Iterator[NameGenerator]:
    """A scope in which fresh names continue above the numbered names of `program` (any IR node)."""
    generator = NameGenerator(highest_number(program) + 1)
    token = _program_names.set(generator)
    try:
        yield generator
    finally:
        _program_names.reset(token)


def highest_number(node) -> int:
    """The highest `n` of the parameter names `..._n` in `node`, -1 if there is none; cached on each node
    (nodes are immutable, and a rewrite shares all but one path with the program it rewrites)."""
    highest = node.__dict__.get("_highest_number")
    if highest is None:
        match = _NUMBERED.search(node.name) if type(node).__name__ == "Param" else None
        if match is not None:
            highest = int(match[1])
        else:
            highest = max((highest_number(child) for _, child in node.children()), default=-1)
        object.__setattr__(node, "_highest_number", highest)
    return highest
