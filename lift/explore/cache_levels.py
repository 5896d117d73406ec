"""Which level of a device's memory serves a kernel's reads, for the cost model (`lift.explore.cost_model`): memory,
the cache in front of it (`DeviceModel.cache_bytes`, a CPU's L3), or a compute unit's own cache
(`DeviceModel.near_cache_bytes`, a CPU core's L2), by the sizes of the arrays read and how they are walked: re-reads
of an array that fits in the cache, reads through overlapping windows, along a stride, at addresses computed from
data (gathers), and the values consecutive work-items share while what each walks stays in its core's cache; and
how fast a CPU core draws from memory, by the streams its work-items walk side by side."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Mapping

if TYPE_CHECKING:
    from lift.explore.cost_model import DeviceModel
    from lift.explore.cost_walk import KernelProfile


def stride_bytes(k: KernelProfile, m: DeviceModel) -> float:
    """What reads along a stride (`KernelProfile.strided`: a sequential loop over `reorder-stride`'s elements, as a
    work-item of a tree reduction walks its chunk) bring through the cache beyond their own bytes: each loads the
    cache line it falls in, up to the stride's width, and the rest of that line waits in the cache for the next
    work-items, which read it after a whole walk (`local_gbps`, not `bandwidth_gbps`: memory streams the array once)."""
    return sum(n * (min(stride, m.cache_line_bytes) - nbytes) for (nbytes, stride), n in k.strided.items()
               if stride > nbytes)


NEAR_CACHE_SHARE = 0.375
"""How much of a compute unit's own cache (`DeviceModel.near_cache_bytes`) what a work-item reads
(`KernelProfile.item_span`) may fill for the part it shares with the next work-item to be still there for it: the
rest holds what streams past (results, the runtime's own data), and lines a page apart (a column of blocks of a
matrix) fill its sets unevenly. Fitted between what stays in this EPYC's 512 KB L2 and what does not (`spills`)."""


def spills(k: KernelProfile, m: DeviceModel) -> bool:
    """Whether what a work-item reads in its sequential loops (`KernelProfile.item_span`) overflows the part of a
    compute unit's own cache that keeps it (`NEAR_CACHE_SHARE`), so that the next work-item reads again from further
    away what they share. A 1024² matrix product's work-item of a 1x64 register block walks 256 KB of B's columns
    and 4 KB of A's row: the work-items of a column of blocks, which share B's, take 104-133 ms where those of a
    row, which share A's, take 53-55; a 2x32 block (136 KB) measures the same either way, and at 512² a 1x64 block
    (130 KB) of a column 8-10 ms against 17 for a row."""
    return bool(m.near_cache_bytes) and k.item_span > m.near_cache_bytes * NEAR_CACHE_SHARE


def gathered_lines(k: KernelProfile, m: DeviceModel) -> tuple:
    """What the gathers of `k` (`KernelProfile.gathers`: loads at addresses computed from data) bring in beyond
    their loads, in bytes from memory and through the cache: a whole cache line each, from the level of the memory
    hierarchy its array fits in: nothing more from a compute unit's own cache (`near_cache_bytes`: a CPU core runs
    ahead of such loads, as of any other), a line through the shared cache (`cache_bytes`, at `local_gbps`), a line
    from memory beyond it (at the bandwidth; a gather from an array of unknown size as from the cache)."""
    memory = cache = 0.0
    for size, loads in k.gathers.items():
        if size is not None and size <= m.near_cache_bytes:
            continue
        if size is None or size <= m.cache_bytes:
            cache += loads * m.cache_line_bytes
        else:
            memory += loads * m.cache_line_bytes
    return memory, cache


def overlaps(k: KernelProfile) -> Counter:
    """Per input array, its reads through overlapping windows (`slide`, not shared by consecutive work-items) beyond
    its size: a window's elements are at constant offsets from one index, and the next window (the same
    work-item's, or the next one's) reads most of them again, so that memory streams each element once and the
    cache serves the other reads (the halo's too), whatever the array's size: a 3x3 stencil keeps three rows in it.
    They still count as loads (`KernelProfile.accesses`)."""
    return Counter({name: max(k.array_windowed[name] - size, 0.0) for name, size in k.array_bytes.items()})


def rereads(k: KernelProfile, m: DeviceModel, unshared: float, windows: Mapping) -> tuple:
    """The re-reads of input arrays on a device with a cache: each array's reads (less those shared by consecutive
    work-items, `unshared` of them, and `windows`, the overlaps of its windows: `overlaps`) beyond its size, those
    of the arrays larger than a compute unit's own cache (`near_cache_bytes`) passing through the shared cache, and
    of all of them those of the arrays that fit in the shared cache with the smaller ones, which it serves alone.
    An array a compute unit's own cache holds is re-read from it as fast as its loads issue (they count as
    `KernelProfile.accesses`), as a gather from it is (`gathered_lines`): a 4096 x 4096 x 64 matrix product's
    work-items of row blocks on dimension 1 re-read all of the 1 MB `B` (in a 2 MB L2) once per row block, 1 GB,
    which priced at `local_gbps` was 5-11 ms of the 6.7-13 ms the candidates measured on the 2-core Xeon and ranked
    them at +0.02 (+0.33 without). None where no cache is known."""
    if not m.cache_bytes:
        return 0.0, 0.0
    through = cached = 0.0
    held = 0
    for name, size in sorted(k.array_bytes.items(), key=lambda a: a[1]):
        extra = max(k.array_reads[name] - k.array_shared[name] * unshared - windows[name] - size, 0.0)
        held += size
        through += extra if size > m.near_cache_bytes else 0.0
        cached += extra if held <= m.cache_bytes else 0.0
    return through, cached


FIRST_LEVEL_BYTES = 32 << 10
"""The size of a CPU core's first-level data cache (32-48 KB on the x86 cores lift has met; OpenCL does not report it):
an array this small is read from it as fast as the loads issue."""


def near_reads(k: KernelProfile, m: DeviceModel) -> float:
    """The bytes `k` reads of input arrays that a compute unit's own cache holds (`near_cache_bytes`, a CPU core's L2)
    and its first-level cache does not (`FIRST_LEVEL_BYTES`): every read of them, re-reads and overlapping windows'
    too, comes from there at `DeviceModel.near_gbps`, while the core issues its other operations."""
    if not m.near_gbps:
        return 0.0
    return sum(k.array_reads[name] for name, size in k.array_bytes.items()
               if FIRST_LEVEL_BYTES < size <= m.near_cache_bytes)


def memory_streams(k: KernelProfile) -> float:
    """How many streams through memory a work-item of `k` keeps going side by side (`KernelProfile.streams`): the
    bytes they all bring from memory over those of the busiest one, each stream of an input array bringing at most
    the array (its re-reads, through overlapping windows, by other work-items or by other rows, come from a cache),
    so that a stream that brings little adds little (a row's one result; gemv's `x`, 16 KB, re-read by every row of
    64 MB of `A`); 0 where it streams nothing."""
    moved = {(array, n): min(nbytes, k.array_bytes.get(array, nbytes)) for (array, n), nbytes in k.streams.items()}
    return sum(moved.values()) / max(nbytes / n for (_, n), nbytes in moved.items()) if moved else 0.0


def memory_gbps(k: KernelProfile, m: DeviceModel, cores: float) -> float:
    """The rate at which `k`'s work-items on `cores` busy compute units draw from memory: the device's bandwidth, or, on
    a CPU (`DeviceModel.stream_gbps`) where the input arrays they stream through overflow its cache (`cache_bytes`;
    none where it is not known), what their streams draw if less. A core's hardware prefetcher follows each
    sequential stream a bounded distance ahead, so that one stream from memory brings at most `stream_gbps`: a
    work-item walking one row of gemv's 64 MB `A` at a time (x's re-reads from its L1 bring nothing) draws 12 GB/s on
    two cores, one walking 2 to 8 rows side by side the whole bandwidth (measured 4.8-6.6 ms against 3.3-4.9 ms at
    4096², re-timed on a quiet machine); dot's one work-item, two streams, 11 GB/s on one core. Inputs the cache
    holds, as the runs of a timing leave them, come from it at a fraction of memory's latency, and one stream keeps
    up: gemv's saved candidates at 1024² and 2048² (`A` 4 and 16 MB in a 32 MB cache) rank +0.40 and +0.50 priced at
    the bandwidth, +0.16 and -0.01 priced by their streams."""
    streams = memory_streams(k)
    walked = sum(k.array_bytes[array] for array in {a for a, _ in k.streams} if array in k.array_bytes)
    if not (streams and m.stream_gbps and m.cache_bytes) or walked <= m.cache_bytes:
        return m.bandwidth_gbps
    return min(m.bandwidth_gbps, cores * streams * m.stream_gbps)
