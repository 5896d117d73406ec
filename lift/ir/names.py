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
    """The highest `n` of the parameter names `..._n` in `node`, -1 if there is none."""
    from lift.ir.nodes import Param

    highest, seen, todo = -1, set(), [node]
    while todo:
        e = todo.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Param):
            match = _NUMBERED.search(e.name)
            if match is not None:
                highest = max(highest, int(match[1]))
            continue
        todo.extend(child for _, child in e.children())
    return highest
