"""The bytes a program's values take at bound sizes, and the refusal of values beyond a memory limit.

At large sizes a program's inputs and results can outgrow the host (or the device): numpy then allocates
until the operating system kills the process. `check_fits` refuses such values before anything is
allocated, with one error naming the arrays, their bytes and the limit; `available_host_bytes` is the
host's limit (what the kernel says it can give without swapping, else its free pages).
"""

from __future__ import annotations

import math
import os
import re
from typing import Mapping, Optional, Sequence

from lift.errors import LiftMemoryError
from lift.ir.binding import host_dtype, host_shape
from lift.types.types import Type


def array_bytes(t: Type, sizes: Mapping[str, int]) -> int:
    """The bytes of a host value of type `t` (a numpy array, or a scalar) under `sizes`."""
    return host_dtype(t).itemsize * math.prod(host_shape(t, sizes))


def available_host_bytes() -> Optional[int]:
    """The host memory available now: `MemAvailable` of /proc/meminfo, else `SC_AVPHYS_PAGES` pages; None
    when the system says neither."""
    try:
        with open("/proc/meminfo") as f:
            m = re.search(r"^MemAvailable:\s+(\d+) kB", f.read(), re.M)
        if m:
            return int(m.group(1)) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_fits(arrays: Sequence[tuple], limit: Optional[int], limit_name: str, copies: int = 1,
               purpose: str = "", error: type = LiftMemoryError) -> None:
    """Refuse `arrays` (`(name, bytes)` pairs), held `copies` times (`purpose` says why, after their total),
    beyond `limit` bytes of `limit_name` (nothing when the limit is unknown) with an `error` naming them all."""
    total = copies * sum(n for _, n in arrays)
    if limit is None or total <= limit:
        return
    listed = ", ".join(f"{name} ({_gib(n)})" for name, n in arrays)
    times = f"{copies} x " if copies > 1 else ""
    raise error(f"the arrays {listed} need {times}{_gib(total // copies)}{purpose}, more than {limit_name} "
                f"({_gib(limit)}): choose smaller sizes")


def _gib(nbytes: int) -> str:
    return f"{nbytes / 2**30:.2f} GiB" if nbytes >= 2**20 else f"{nbytes} bytes"
