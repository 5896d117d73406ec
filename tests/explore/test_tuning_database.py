"""The tuning database: every explored candidate kept per user, reused by later searches and by `lift.compile`."""

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import lift
from lift.explore.candidate import program_key
from lift.explore.driver import explore
from lift.explore.evaluation import TimingPolicy
from lift.explore.log import Record, ResultLog
from lift.explore.rewrite_search import RewriteSearch
from lift.explore.tuned_compile import KnownLowerings
from lift.explore.tuning_database import SharedLog, TuningDatabase, default_root, kernel_tuner_cache, size_class
from lift.ir.program_file import load_program_file
from lift.rules.default_lowering import LoweringError, lower
from lift.rules.lowering_choice import is_lowered
from opencl_device import needs_device

ROOT = Path(__file__).resolve().parents[2]
FAST = TimingPolicy(min_runs=3, max_runs=10, max_s=0.2)
DEVICE = "PoCL / cpu (driver 3.1)"


def _record(key="k1", sizes=None, time_ms=1.0, status="ok", device=DEVICE, derivation=({"rule": "r", "at": "", "params": {}},)):
    return Record(key, device, "asum", sizes or {"N": 1024}, status, time_ms=time_ms if status == "ok" else None,
                  gbps=1.0 if status == "ok" else None, derivation=derivation)


def test_default_root_follows_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("LIFT_TUNING_DB", str(tmp_path / "db"))
    assert default_root() == tmp_path / "db"
    monkeypatch.setenv("LIFT_TUNING_DB", "off")
    assert default_root() is None and not TuningDatabase().enabled
    TuningDatabase().append("abc", _record())  # turned off: nothing written, no error
    monkeypatch.delenv("LIFT_TUNING_DB")
    assert default_root().parts[-2:] == ("lift", "tuning")


def test_records_are_kept_by_program_and_ranked_exact_sizes_first(tmp_path):
    store = TuningDatabase(tmp_path)
    store.append("p", _record("slow", time_ms=5.0))
    store.append("p", _record("fast", time_ms=2.0))
    store.append("p", _record("broken", status="compile"))
    store.append("p", _record("near", sizes={"N": 1500}, time_ms=0.5))
    store.append("p", _record("far", sizes={"N": 4096}, time_ms=0.1))
    store.append("p", _record("other", time_ms=0.1, device="another device"))
    store.append("q", _record("q-only", time_ms=0.1))
    with open(store.path("p"), "a") as f:
        f.write('{"key": "cut short\n')
    assert [r.key for r in store.ranked("p", DEVICE, {"N": 1024})] == ["fast", "slow", "near"]
    assert store.best("p", DEVICE, {"N": 2000}).key == "near"  # 1024 and 1500 share 2000's power of two
    assert store.best("p", DEVICE, {"N": 1 << 20}) is None
    assert store.find("p", "broken", DEVICE, {"N": 1024}).status == "compile"
    assert store.programs() == ["p", "q"]
    assert size_class({"N": 1024}) == size_class({"N": 2047}) != size_class({"N": 2048})


def test_the_final_rounds_winner_ranks_first_while_the_round_stands(tmp_path):
    """A candidate faster in the search than the round's winner, measured alone under another load, is not the
    winner `lift.compile` takes; one measured after the round, faster than its slowest, overturns it."""
    store = TuningDatabase(tmp_path)
    at = "2026-01-01T00:00:0{}+00:00"
    store.append("p", replace(_record("alone", time_ms=1.0), recorded_at=at.format(1)))
    for key, ms in (("winner", 3.0), ("default", 4.0)):
        store.append("p", replace(_record(key, time_ms=ms), recorded_at=at.format(2), final="round"))
    assert [r.key for r in store.ranked("p", DEVICE, {"N": 1024})] == ["winner", "default", "alone"]
    store.append("p", replace(_record("newer", time_ms=3.5), recorded_at=at.format(3)))
    assert [r.key for r in store.ranked("p", DEVICE, {"N": 1024})] == ["alone", "winner", "newer", "default"]


def test_kernel_tuner_export_has_its_schema_fields(tmp_path):
    records = [replace(_record("a", time_ms=2.0), params={"chunk": 64}), _record("b", status="compile")]
    cache = kernel_tuner_cache(records)
    assert cache["schema_version"] == "1.0.0" and cache["objective"] == "time"
    assert cache["tune_params_keys"] == ["candidate", "chunk"] and cache["problem_size"] == [1024]
    lines = list(cache["cache"].values())
    assert lines[0]["time"] == 2.0 and lines[0]["chunk"] == 64 and isinstance(lines[1]["time"], str)
    assert set(cache["tune_params"]["candidate"]) == {"a", "b"}
    with pytest.raises(ValueError, match="one device, kernel and sizes"):
        kernel_tuner_cache([_record(), _record(sizes={"N": 8})])


def test_the_shared_log_reuses_another_folders_measurement(examples, tmp_path):
    program = examples["asum"].kernels["asum"]
    store = TuningDatabase(tmp_path / "db")
    h = program_key(program)
    for folder in "abc":
        (tmp_path / folder).mkdir()
    with ResultLog(tmp_path / "a" / "log.jsonl") as log:
        SharedLog(log, store, program).append(_record("k1"))
        assert log.find("k1", DEVICE, "asum", {"N": 1024}) is not None
    assert [r.key for r in store.records(h)] == ["k1"]
    with ResultLog(tmp_path / "b" / "log.jsonl") as log:
        shared = SharedLog(log, store, program)
        reused = shared.settled("k1", DEVICE, "asum_other", {"N": 1024})
        assert reused is not None and reused.kernel == "asum_other" and shared.reused == 1
        assert log.find("k1", DEVICE, "asum_other", {"N": 1024}) is not None
        assert shared.settled("k1", DEVICE, "asum", {"N": 2048}) is None
    store.append(h, _record("flaky", status="timeout"))
    store.append(h, _record("broken", status="generate"))
    with ResultLog(tmp_path / "c" / "log.jsonl") as log:
        shared = SharedLog(log, store, program)
        assert shared.settled("flaky", DEVICE, "asum", {"N": 1024}) is None
        assert shared.settled("broken", DEVICE, "asum", {"N": 1024}) is None  # another lift may generate it


@pytest.fixture(scope="module")
def explored(tmp_path_factory):
    """asum explored once (four candidates) into a tuning database of its own."""
    root = tmp_path_factory.mktemp("explored")
    store = TuningDatabase(root / "db")
    pf = load_program_file(ROOT / "examples" / "asum.py")
    sizes = {"N": 1 << 16}
    result = explore(pf, "asum", sizes, RewriteSearch(pf.kernels["asum"], sizes, seed=0), budget_s=300,
                     out_dir=root / "first", max_candidates=4, timing=FAST, progress=False, tuning_database=store)
    return pf, sizes, store, result, root


@needs_device
def test_a_second_search_elsewhere_measures_nothing_again(explored):
    pf, sizes, store, first, root = explored
    assert first.evaluated > 0
    assert len(list(store.records(program_key(pf.kernels["asum"])))) >= first.evaluated
    again = explore(pf, "asum", sizes, RewriteSearch(pf.kernels["asum"], sizes, seed=0), budget_s=300,
                    out_dir=root / "second", max_candidates=4, timing=FAST, progress=False, tuning_database=store)
    assert again.winner.key == first.winner.key
    assert again.skipped >= first.evaluated - first.remeasured


@needs_device
def test_compile_uses_the_databases_winner_and_agrees_with_numpy(explored, monkeypatch):
    pf, sizes, store, result, _ = explored
    monkeypatch.setenv("LIFT_TUNING_DB", str(store.root))
    program = pf.kernels["asum"]
    x = np.random.default_rng(0).uniform(-1, 1, sizes["N"]).astype(np.float32)
    for lowering in (None, "tuned"):
        compiled = lift.compile(program, lowering=lowering)
        np.testing.assert_allclose(compiled(x), [np.abs(x).sum(dtype=np.float64)], rtol=1e-4)
        known = KnownLowerings(program, lift.opencl_gen.runtime.device_label(compiled.device), store)
        winner = known.derivations(sizes)[0].replay(program)
        assert is_lowered(winner) and lift.rules.alpha_equal(compiled.lowered(sizes), winner)
    # a size outside every tuned size class gets the default lowering
    y = x[:1000]
    fallback = lift.compile(program)
    np.testing.assert_allclose(fallback(y), [np.abs(y).sum(dtype=np.float64)], rtol=1e-4)
    assert lift.rules.alpha_equal(fallback.lowered({"N": 1000}), lower(program, {"N": 1000},
                                                                              fallback.device.native_vector_width_float))
    with pytest.raises(LoweringError, match="no tuned lowering for kernel 'asum' at N=1000"):
        lift.compile(program, name="asum", lowering="tuned")(y)


@needs_device
def test_cli_shows_and_exports_the_database(explored, tmp_path):
    pf, sizes, store, result, _ = explored
    env = {**__import__("os").environ, "LIFT_TUNING_DB": str(store.root)}
    shown = subprocess.run([sys.executable, "-m", "lift.cli", "tuning", "show", str(ROOT / "examples" / "asum.py")],
                           capture_output=True, text=True, env=env)
    assert shown.returncode == 0, shown.stderr
    assert str(store.root) in shown.stdout and "asum (N=65536)" in shown.stdout and "best" in shown.stdout
    out = tmp_path / "asum.kt.json"
    done = subprocess.run([sys.executable, "-m", "lift.cli", "tuning", "export", str(ROOT / "examples" / "asum.py"),
                           "--size", f"N={sizes['N']}", "--format", "kernel_tuner", "-o", str(out)],
                          capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    cache = json.loads(out.read_text())
    times = [v["time"] for v in cache["cache"].values() if not isinstance(v["time"], str)]
    assert min(times) == pytest.approx(min(r.time_ms for r in result.ranked if r.ok))
    missing = subprocess.run([sys.executable, "-m", "lift.cli", "tuning", "export", str(ROOT / "examples" / "scal.py"),
                              "-o", str(tmp_path / "x.jsonl")], capture_output=True, text=True, env=env)
    assert missing.returncode == 1 and missing.stderr.startswith("error: the tuning database holds no record")
