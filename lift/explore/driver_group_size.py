"""The work-group size an OpenCL driver picks where a kernel's launch leaves it (`local_size` None), as the cost model
(`lift.explore.cost_model`) needs it to count a kernel's work-groups and the compute units they occupy."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from lift.explore.cost_model import DeviceModel


MIN_DRIVER_GROUPS = 4
"""A CPU driver splits a group for idle compute units only while each part keeps this many times its preferred
work-group multiple (`PREFERRED_MULTIPLE`) of work-items (PoCL's `pocl_default_local_size_optimizer`), so groups of at
least 32. Timed in interleaved rounds on two idle cores, PoCL 3.1 ran N-body's 16 and 32 work-items on one core (74-76
ms) and 64 or 128 on both (38-43 ms)."""

PREFERRED_MULTIPLE = 8
"""A CPU driver's preferred work-group multiple: PoCL's CPU devices report 8 whatever their vector width (16 floats
with AVX-512: a kernel of 64 work-items runs as two groups of 32 there too)."""


def driver_group_size(global_sizes: Sequence[int], m: "DeviceModel") -> int:
    """The work-group size a driver picks for a kernel of `global_sizes` work-items where the generator leaves it. A
    GPU's: a group of `lanes` work-items. A CPU's (PoCL's, whose group is a loop over its work-items, so that large
    groups cost least): in each dimension, dimension 0 first, the largest size dividing the global size within the
    device's limit on a group; then, while compute units outnumber groups by a factor `splits`, groups are split by
    the largest factor up to `splits` that divides them, as long as they keep `MIN_DRIVER_GROUPS` preferred multiples
    (`PREFERRED_MULTIPLE`) of work-items each."""
    work_items = math.prod(global_sizes)
    if m.lanes > 1:
        return min(work_items, m.lanes)
    size = 1
    for n in global_sizes:
        size *= _largest_divisor(n, m.max_work_group_size // size)
    least = min(MIN_DRIVER_GROUPS * PREFERRED_MULTIPLE, m.max_work_group_size)
    while (splits := m.compute_units // (work_items // size)) > 1 and size >= splits * least:
        split = next((d for d in range(splits, 1, -1) if size % d == 0), 1)
        if split == 1:
            break
        size //= split
    return size


def _largest_divisor(n: int, limit: int) -> int:
    """The largest divisor of `n` that is at most `limit` (at least 1)."""
    return next((d for d in range(min(n, limit), 1, -1) if n % d == 0), 1)
