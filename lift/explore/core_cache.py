"""The size of a compute unit's own cache (`DeviceModel.near_cache_bytes`), a device fact the cost model's judgements
of what stays near a work-item rest on (`lift.explore.cache_levels`: `spills`, `gathered_lines`).

OpenCL does not report it. A CPU runtime reports a local memory that it keeps in ordinary memory and sizes as it
likes: PoCL after a core's L2 (512 KB on this machine's EPYC), Intel's CPU runtime 32 KB, which would make every
work-item's walk "spill". So for a CPU device the host's own description is read, the level-2 cache of its first
core in Linux's sysfs (`/sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}`); where there is none (another
operating system), the reported local memory, or `DEFAULT_CORE_CACHE_BYTES`. A GPU's local memory is a scratchpad
beside its L1 cache, not that cache, and its L1's size is not reported: none known (0), so that the model judges no
spill there and prices a gather from the cache in front of global memory."""

from __future__ import annotations

from pathlib import Path

HOST_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
"""Linux's description of the first CPU core's caches, one `index<k>` folder per cache."""

DEFAULT_CORE_CACHE_BYTES = 256 << 10
"""A CPU core's L2 where neither the host nor the runtime says (256 KB: Intel's cores from Haswell to Skylake's
client parts; AMD's and newer Intel cores have 512 KB to 2 MB, so the model errs towards spills)."""

_UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def core_cache_bytes(kind: str, local_mem_bytes: int, caches: Path = HOST_CACHES) -> int:
    """The size of a compute unit's own cache on a `kind` ("cpu" or "gpu") device whose runtime reports
    `local_mem_bytes` of local memory (see the module docstring); `caches`: the host's sysfs cache folder."""
    if kind != "cpu":
        return 0
    return host_level2_bytes(caches) or local_mem_bytes or DEFAULT_CORE_CACHE_BYTES


def host_level2_bytes(caches: Path = HOST_CACHES) -> int:
    """The size of the level-2 data (or unified) cache described under `caches` (0: none described or readable)."""
    for index in sorted(caches.glob("index*")):
        try:
            level, kind, size = ((index / name).read_text().strip() for name in ("level", "type", "size"))
        except OSError:
            continue
        if level == "2" and kind in ("Data", "Unified"):
            return _size_bytes(size)
    return 0


def _size_bytes(text: str) -> int:
    """Bytes of a sysfs cache size (`512K`, `2M`, or a number of bytes; 0 where unreadable)."""
    scale = _UNITS.get(text[-1:].upper(), 1)
    digits = text[:-1] if scale > 1 else text
    return int(digits) * scale if digits.isdigit() else 0
