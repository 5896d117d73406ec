"""One explorer at a time per output folder: an exclusive `flock` on `.lift.lock` in the folder.

Two explores writing one folder would measure the same candidates twice and overwrite each other's
winner files, so the second is refused with the first one's process id. The lock is the kernel's
(`fcntl.flock`): it is released when the holder closes it or dies, even by `kill -9`, so no stale lock
is ever left behind to clear by hand.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from lift.errors import LiftError

LOCK_NAME = ".lift.lock"


class FolderLockedError(LiftError):
    """Another process holds the output folder."""


class FolderLock:
    """An exclusive lock on `folder` for as long as the context lasts (never waits: refuses at once)."""

    def __init__(self, folder):
        self.folder = Path(folder)
        self._fd = None

    def acquire(self) -> "FolderLock":
        path = self.folder / LOCK_NAME
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise FolderLockedError(f"{self.folder} is in use by another lift explore (process {holder}): "
                                    "wait for it to finish, or give another --out") from None
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "FolderLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
