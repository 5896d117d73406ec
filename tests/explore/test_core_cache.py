"""A compute unit's own cache as a device fact (`lift.explore.core_cache`): read from a host's sysfs description of
its caches (here a fake one), with the runtime's local memory or a default where there is none, none on a GPU."""

import pytest

from lift.explore.core_cache import DEFAULT_CORE_CACHE_BYTES, core_cache_bytes, host_level2_bytes
from lift.explore.cost_model import DeviceModel


def _caches(root, *caches):
    for k, (level, kind, size) in enumerate(caches):
        index = root / f"index{k}"
        index.mkdir(parents=True)
        for name, text in (("level", level), ("type", kind), ("size", size)):
            (index / name).write_text(f"{text}\n")
    return root


EPYC = (("1", "Data", "32K"), ("1", "Instruction", "32K"), ("2", "Unified", "512K"), ("3", "Unified", "32768K"))


def test_a_cpu_core_cache_is_the_hosts_level_2_not_the_runtimes_local_memory(tmp_path):
    caches = _caches(tmp_path, *EPYC)
    assert host_level2_bytes(caches) == 512 << 10
    assert core_cache_bytes("cpu", 32 << 10, caches) == 512 << 10  # Intel's CPU runtime reports 32 KB


@pytest.mark.parametrize("size, nbytes", [("2M", 2 << 20), ("1280K", 1280 << 10), ("262144", 262144), ("?", 0)])
def test_sysfs_sizes_in_their_units(tmp_path, size, nbytes):
    assert host_level2_bytes(_caches(tmp_path, ("1", "Data", "48K"), ("2", "Unified", size))) == nbytes


def test_without_a_host_description_the_runtime_says_or_the_default(tmp_path):
    only_level_1 = _caches(tmp_path / "l1", ("1", "Data", "32K"))
    (tmp_path / "l1" / "index1").mkdir()  # an unreadable cache is skipped
    for caches in (tmp_path / "none", only_level_1):
        assert core_cache_bytes("cpu", 524288, caches) == 524288
        assert core_cache_bytes("cpu", 0, caches) == DEFAULT_CORE_CACHE_BYTES


def test_a_gpu_has_none_known(tmp_path):
    assert core_cache_bytes("gpu", 49152, _caches(tmp_path, *EPYC)) == 0


def test_the_model_takes_the_fact_and_reads_old_facts_as_before():
    facts = ("cpu", 2, 40.0, 0.004, 32768, 4096, 8, 32 << 20, 64)
    assert DeviceModel.for_device(*facts, near_cache_bytes=512 << 10).near_cache_bytes == 512 << 10
    assert DeviceModel.for_device(*facts).near_cache_bytes == 32768
    assert DeviceModel.for_device("gpu", *facts[1:]).near_cache_bytes == 0
