"""The size of the cache in front of global memory that the cost model counts on (`DeviceModel.cache_bytes`), a device
fact its judgements of what memory streams rest on (`lift.explore.cache_levels`: `memory_gbps`, `rereads`).

OpenCL reports it (`CL_DEVICE_GLOBAL_MEM_CACHE_SIZE`; PoCL reports the host's last-level cache). A virtual machine is
told of its host's whole last-level cache, which the host's other guests share: a 2-core KVM guest of an Intel Xeon
reports a 480 MB L3, yet one of its cores reads 28 GB/s through arrays of 4 to 24 MB and 14-15 GB/s through 48 MB to
1 GB, as from memory (the other core busy), and at a load of 8 a 64 MB array at 5 GB/s against 27 for 4 MB. So for a
CPU in a virtual machine (Linux's `hypervisor` CPU flag) the model counts on at most `GUEST_CACHE_PER_CORE` for each
compute unit (the 2-core EPYC of earlier measurements reported 32 MB, which this keeps); a host's own CPU keeps what
it reports. gemv's 59 candidates at 4096² (A 64 MB), re-timed at a load of 10 on the Xeon guest, rank +0.76 against
the model's predictions with this share, +0.45 with the 480 MB."""

from __future__ import annotations

from pathlib import Path

HOST_CPUINFO = Path("/proc/cpuinfo")
"""Linux's description of the CPU, whose `flags` name `hypervisor` in a virtual machine."""

GUEST_CACHE_PER_CORE = 16 << 20
"""The share of the host's last-level cache a virtual machine's core counts on (16 MB: 32 MB for the 2-core Xeon
guest, which reads 24 MB at the cache's rate, 32 MB at 80-90% of it, 48 MB at memory's)."""


def shared_cache_bytes(kind: str, reported: int, compute_units: int, cpuinfo: Path = HOST_CPUINFO) -> int:
    """The cache in front of global memory of a `kind` ("cpu" or "gpu") device that reports `reported` bytes and has
    `compute_units` (see the module docstring); `cpuinfo`: the host's `/proc/cpuinfo`."""
    if kind != "cpu" or not in_virtual_machine(cpuinfo):
        return reported
    return min(reported, compute_units * GUEST_CACHE_PER_CORE)


def in_virtual_machine(cpuinfo: Path = HOST_CPUINFO) -> bool:
    """Whether `cpuinfo` (Linux's `/proc/cpuinfo`) says the CPU runs under a hypervisor (False where unreadable)."""
    try:
        text = cpuinfo.read_text()
    except OSError:
        return False
    return any(line.startswith("flags") and "hypervisor" in line.split() for line in text.splitlines())
