"""The cache in front of global memory as a device fact (`lift.explore.shared_cache`): what the device reports, but in
a virtual machine (here a fake `/proc/cpuinfo`) no more than a share per compute unit of the host's cache."""

import pytest

from lift import ArrayType, AsScalar, AsVector, Float, Join, MapGlb, ReduceSeq, SizeVar, Split, Vectorize, fun
from lift.explore.candidate import Candidate
from lift.explore.cost_model import DeviceModel, predict
from lift.explore.cost_walk import profile
from lift.explore.shared_cache import GUEST_CACHE_PER_CORE, in_virtual_machine, shared_cache_bytes

GUEST = "processor\t: 0\nflags\t\t: fpu vme avx512f hypervisor lahf_lm\n\nprocessor\t: 1\nflags\t\t: fpu hypervisor\n"
HOST = "processor\t: 0\nflags\t\t: fpu vme avx512f lahf_lm\nbugs\t\t: hypervisor_like\n"


def _cpuinfo(tmp_path, text):
    path = tmp_path / ("guest" if text == GUEST else "host")
    path.write_text(text)
    return path


def test_a_guests_host_cache_counts_for_its_cores_share(tmp_path):
    guest = _cpuinfo(tmp_path, GUEST)
    assert in_virtual_machine(guest)
    assert shared_cache_bytes("cpu", 480 << 20, 2, guest) == 2 * GUEST_CACHE_PER_CORE == 32 << 20
    assert shared_cache_bytes("cpu", 32 << 20, 2, guest) == 32 << 20, "the EPYC guest's 32 MB as reported"
    assert shared_cache_bytes("gpu", 6 << 20, 132, guest) == 6 << 20, "a GPU's cache is its own"


def test_a_host_keeps_what_its_cpu_reports(tmp_path):
    host = _cpuinfo(tmp_path, HOST)
    assert not in_virtual_machine(host) and not in_virtual_machine(tmp_path / "missing")
    assert shared_cache_bytes("cpu", 480 << 20, 2, host) == 480 << 20
    assert shared_cache_bytes("cpu", 480 << 20, 2, tmp_path / "missing") == 480 << 20


def _asum(ns, items):
    """asum vectorised by 16, on one work-item or on chunks of 1024 vectors, one work-item each."""
    add, step, n = ns["add"], ns["abs_and_add"], SizeVar("N")
    lanes = ReduceSeq(Vectorize(16, step), Vectorize(16, 0.0))
    body = lanes if items == 1 else \
        ReduceSeq(Vectorize(16, add), Vectorize(16, 0.0)) @ Join() @ MapGlb(lanes) @ Split(1024)
    return fun([ArrayType(Float, n)], lambda x: (ReduceSeq(add, 0.0) @ AsScalar() @ body @ AsVector(16))(x))


def test_asums_one_work_item_streams_from_memory_on_the_guest(examples, tmp_path):
    """On the 2-core Xeon guest (bandwidth 15.2 GB/s), asum's one work-item was predicted as fast as chunks on both
    cores (4.43 against 4.38 ms): its 64 MB fit the reported 480 MB, so that no core's stream was capped
    (`lift.explore.cache_levels.memory_gbps`); they overflow the guest's share, and one core's stream draws less."""
    ns, sizes = examples["asum"].namespace, {"N": 1 << 24}
    one, both = (profile(Candidate(_asum(ns, items)).generate("k", sizes)) for items in (1, 2))
    for cpuinfo, slower in ((_cpuinfo(tmp_path, HOST), 1.0), (_cpuinfo(tmp_path, GUEST), 2.0)):
        cache = shared_cache_bytes("cpu", 480 << 20, 2, cpuinfo)
        xeon = DeviceModel.for_device("cpu", 2, 15.2, 0.0004, 2 << 20, 4096, 16, cache, 64, 2 << 20)
        assert predict(one, xeon) == pytest.approx(slower * predict(both, xeon), rel=0.1)
