"""Writing lift's output files safely: whole or not at all, never through a symlink, under checked names.

Every file lift writes (a `.cl` file and its manifest, the explorer's inputs, bandwidth and winner files)
is written to a temporary file in the same folder, synced, and moved over the target with `os.replace`:
a reader (or a run killed half-way) sees the old file or the new one, never a mix, and a symlink at the
target is replaced, not written through. The one file appended to in place, the explorer's log, is
opened only when it is not a symlink pointing out of its folder (`check_inside`). Names that become
paths (kernel names) must be identifiers, so that no name leads out of its folder.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path
from typing import Callable, IO

from lift.errors import LiftError


class UnsafePathError(LiftError):
    """A path lift refuses to write: a name that is no identifier, or a symlink out of the output folder."""


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_MODE = 0o666 & ~_umask()


def check_name(name: str, what: str = "kernel name") -> str:
    """`name` if it is a Python identifier (so also a safe file name), else an `UnsafePathError`."""
    if not isinstance(name, str) or not name.isidentifier():
        raise UnsafePathError(f"a {what} must be an identifier (letters, digits, _), got {name!r}")
    return name


def check_inside(path, folder) -> Path:
    """`path`, unless it is a symlink whose target lies outside `folder` (an `UnsafePathError`)."""
    path, root = Path(path), Path(folder).resolve()
    if path.is_symlink():
        target = path.resolve()
        if target != root and root not in target.parents:
            raise UnsafePathError(f"{path} is a symlink to {target}, outside {folder}: lift does not write "
                                  "through it; remove the link")
    return path


def replace_with(path, write: Callable[[IO[bytes]], None]) -> Path:
    """Write the file `path` whole with `write(file)`: to a temporary file beside it, then `os.replace`."""
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), str(path.parent))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_text(path, text: str) -> Path:
    """Replace the file `path` with `text` (UTF-8), atomically (`replace_with`)."""
    return replace_with(path, lambda f: f.write(text.encode("utf-8")))
