"""Where the user wrote a node, and errors that say so: `... (at body.args0.f), written at asum.py:12`.

A `FunCall` or `Lambda` that a user's program builds records `file:line` of the program's line that built it
(`written_at`, a field outside structural equality and hashing): one look up the Python stack, past the DSL's
own frames (calling a pattern, composing with `@`, an operator on IR values, `fun`). Nodes that lift builds
itself (rewrite rules, type inference) record nothing; they keep the place of the node they replace
(`Node.with_child`, `lift.rules.location.replace_at`), and an error names the place of the innermost node on
its path that has one.

Errors name places as printed paths into the program (`at body.args0.f`); `locate(error, program)` adds the
user's file and line of the first, once, where typecheck (`lift.ir.typecheck.infer`), the code generator
(`lift.opencl_gen.kernels.generate`, and so `lift explore`'s candidates) and the replay of a rewrite
(`lift.rules.RewriteEngine.apply`) report an error.
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from typing import Optional

from lift.errors import LiftError

__all__ = ["caller_location", "locate", "location_at", "with_location_of"]

_LIFT_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
# The modules through which a user's line builds nodes (a pattern's call, `@`, operators, `fun`), and
# dataclasses' `replace` and generated `__init__`.
_DSL_FILES = frozenset({os.path.join(_LIFT_DIR, "ir", name) for name in
                        ("nodes.py", "patterns.py", "operators.py", "userfun.py", "source_location.py")}
                       | {"<string>", dataclasses.__file__})
_PLACE = re.compile(r"\bat (the root|[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*)")


def caller_location() -> Optional[str]:
    """`file:line` of the user's code that is building a node; None when lift itself builds it."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename in _DSL_FILES:
        frame = frame.f_back
    if frame is None or frame.f_code.co_filename.startswith(_LIFT_DIR):
        return None
    return f"{_shown(frame.f_code.co_filename)}:{frame.f_lineno}"


def _shown(filename: str) -> str:
    """A file name relative to the working directory where it lies below it."""
    try:
        relative = os.path.relpath(filename)
    except ValueError:
        return filename
    return filename if relative.startswith(os.pardir) else relative


def location_of(node) -> Optional[str]:
    return getattr(node, "written_at", None)


def with_location_of(old, new):
    """`new`, which replaces `old` in a program, with `old`'s place where `new` has none."""
    where = location_of(old)
    if where is None or location_of(new) is not None or not hasattr(new, "written_at"):
        return new
    from dataclasses import replace

    return replace(new, written_at=where)


def location_at(root, path: str) -> Optional[str]:
    """The place of the innermost node on `path` from `root` that has one; None when `path` is not a path of
    `root` (its first step is not a child) or no node on it has a place."""
    where, node = location_of(root), root
    for i, step in enumerate(path.split(".") if path else ()):
        child = dict(node.children()).get(step)
        if child is None:
            if i == 0:
                return None
            break
        node = child
        where = location_of(node) or where
    return where


def locate(error: LiftError, program, path: Optional[str] = None) -> LiftError:
    """`error` with the user's place added at its end (`absf expects ... (at body.args0.f.f), written at
    asum.py:14`): the place of `path`, or else of the first path its message names; once per error."""
    if getattr(error, "located", False) or not error.args or not isinstance(error.args[0], str) \
            or ", written at " in error.args[0]:  # it says a place already (it quotes a located error)
        return error
    paths = [path] if path is not None else ["" if m[1] == "the root" else m[1] for m in _PLACE.finditer(error.args[0])]
    where = next((w for w in (location_at(program, p) for p in paths) if w is not None), None)
    if where is not None:
        error.args = (f"{error.args[0]}, written at {where}",) + error.args[1:]
    error.located = True
    return error
