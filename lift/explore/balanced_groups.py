"""The balanced work-group size: groups small enough that a kernel is dealt out as many of them, so that the compute
units share it evenly even while other work takes some of them (`lift explore`'s work-group size `BALANCED`).

Where a launch leaves the work-group size to it, a CPU driver may run a kernel as one group per compute unit: PoCL
3.1 splits a 2-D stencil's 8 x 512 work-items (4 rows of 256 columns each) into 2 groups on 2 cores, and deals the
groups to its threads in chunks, so that when another process takes a core the kernel waits for the thread holding
the other half. Timed on PoCL on 2 cores shared with other processes (load 5-7, 12 interleaved rounds), that
kernel reached 0.74 of the streaming copy's rate in the median round and 0.26 in the worst at the driver's 2
groups; at 512 groups (8 work-items each), 0.80 and 0.47 (in another run, where every stencil kernel ran at a third
of the copy's rate, the hand-written one too, both sizes alike). The search measures which size is fastest: this
only proposes one that the fixed sizes (1, 64) and the driver's choice miss.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

BALANCED = "balanced"
"""The work-group size of `lift explore`'s `work_group_sizes` resolved per candidate by `balanced_group_size`."""

GROUPS_PER_UNIT = 256
"""Work-groups per compute unit that the balanced size leaves a kernel (at least)."""


def balanced_group_size(kernels: Sequence, sizes: Mapping[str, int], compute_units: int, max_work_group: int,
                        max_item_sizes: tuple) -> int:
    """The largest power of two that divides dimension 0 of every kernel of `kernels` (a generated program's) whose
    work-group size the generator leaves to the driver, within the device's limits, and leaves each of them at least
    `GROUPS_PER_UNIT` work-groups per compute unit, groups laid out as `local_size_overrides` lays them (the size
    along dimension 0, one work-item along the others); 1 where no larger one does."""
    limit = min([max_work_group, *max_item_sizes[:1]])
    least = GROUPS_PER_UNIT * max(compute_units, 1)
    return min((_fitting(k.launch.evaluate(sizes)[0], limit, least) for k in kernels if k.launch.local_size is None),
               default=1)


def _fitting(global_sizes: tuple, limit: int, least: int) -> int:
    size = 1
    while global_sizes[0] % (2 * size) == 0 and 2 * size <= limit and math.prod(global_sizes) // (2 * size) >= least:
        size *= 2
    return size
