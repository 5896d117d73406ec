"""The tuning log (`lift.explore.log`) against bad data, retries, locks and symlinks; safe files; manifests
of every example run by a bare host program.

Each corruption a hand, a kill or another version can leave in a log is skipped with one warning naming
its line, never a crash and never a fake winner (a NaN or negative time); transient failures are
evaluated again a bounded number of times; one explorer at a time writes a folder.
"""

import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lift.cli import main
from lift.explore.bandwidth import StreamingBandwidth, cached
from lift.explore.lock import LOCK_NAME, FolderLock, FolderLockedError
from lift.explore.log import MAX_ATTEMPTS, SCHEMA, Record, ResultLog
from lift.explore.report import winner_paths
from lift.files import UnsafePathError, check_name, replace_with, write_text
from lift.ir.binding import to_host
from lift.ir.interpreter import interpret
from lift.ir.program_file import load_program_file
from lift.opencl_gen.kernels import generate
from lift.opencl_gen.manifest import write_cl

from opencl_device import MANIFEST_HOST, needs_device

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
DEVICE, PROBLEM = "dev (driver 1)", ("asum", {"N": 1024})


def record(key, status="ok", time_ms=1.0, **kw):
    times = dict(time_ms=time_ms, gbps=kw.pop("gbps", 2.0)) if status == "ok" else {}
    return Record(key, DEVICE, *PROBLEM, status, **times, **kw)


def valid_line(key) -> dict:
    return json.loads(record(key).to_json())


def open_log(path, **kw):
    warnings = []
    return ResultLog(path, warn=warnings.append, **kw), warnings


# A bad line, given the fields of a valid one: (id, the line's text, fragment of its warning).
CORRUPTIONS = [
    ("time-a-string", lambda r: {**r, "time_ms": "1.5"}, "time_ms must be a finite positive number"),
    ("time-null-but-ok", lambda r: {**r, "time_ms": None}, "a working candidate's record needs time_ms"),
    ("time-nan", lambda r: json.dumps(r).replace('"time_ms": 1.0', '"time_ms": NaN'), "time_ms must be"),
    ("time-infinite", lambda r: json.dumps(r).replace('"time_ms": 1.0', '"time_ms": Infinity'), "time_ms must be"),
    ("time-negative", lambda r: {**r, "time_ms": -1}, "time_ms must be a finite positive number"),
    ("time-zero", lambda r: {**r, "time_ms": 0}, "time_ms must be"),
    ("time-a-bool", lambda r: {**r, "time_ms": True}, "time_ms must be"),
    ("searched-negative", lambda r: {**r, "searched_ms": -2.0}, "searched_ms must be a finite positive number"),
    ("searched-a-string", lambda r: {**r, "searched_ms": "1.5"}, "searched_ms must be"),
    ("gbps-nan", lambda r: json.dumps(r).replace('"gbps": 2.0', '"gbps": NaN'), "gbps must be"),
    ("sizes-a-list", lambda r: {**r, "sizes": [1024]}, "sizes must be an object"),
    ("sizes-negative", lambda r: {**r, "sizes": {"N": -1}}, "sizes must be"),
    ("not-an-object", lambda r: [r["key"], 1.0], "a record is a JSON object, got list"),
    ("a-number", lambda r: 42, "a record is a JSON object, got int"),
    ("not-json", lambda r: "{'key': 'x'}", "not JSON"),
    ("garbage-bytes", lambda r: "\x00\x01garbage", "not JSON"),
    ("unknown-status", lambda r: {**r, "status": "great"}, "status must be one of"),
    ("unknown-role", lambda r: {**r, "role": "judge"}, "role must be"),
    ("kernel-a-path", lambda r: {**r, "kernel": "../asum"}, "kernel must be an identifier"),
    ("no-key", lambda r: {k: v for k, v in r.items() if k != "key"}, "no 'key'"),
    ("empty-key", lambda r: {**r, "key": ""}, "key must be a non-empty string"),
    ("unknown-field", lambda r: {**r, "colour": "red"}, "unknown field 'colour'"),
    ("newer-schema", lambda r: {**r, "schema": SCHEMA + 1}, "written by a newer lift"),
    ("attempts-zero", lambda r: {**r, "attempts": 0}, "attempts must be an integer >= 1"),
    ("runs-a-float", lambda r: {**r, "runs": 2.5}, "runs must be an integer"),
    ("per-kernel-nan", lambda r: json.dumps({**r, "per_kernel_ms": [1.0]}).replace("[1.0]", "[NaN]"),
     "per_kernel_ms must be"),
    ("derivation-an-object", lambda r: {**r, "derivation": {"rule": "x"}}, "derivation must be a list"),
]


@pytest.mark.parametrize("corrupt, fragment", [c[1:] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS])
def test_a_bad_record_is_skipped_with_one_warning_naming_its_line(tmp_path, corrupt, fragment):
    bad = corrupt(valid_line("bad"))
    path = tmp_path / "log.jsonl"
    path.write_text("\n".join([json.dumps(valid_line("a")), bad if isinstance(bad, str) else json.dumps(bad),
                               json.dumps(valid_line("b"))]) + "\n")
    log, warnings = open_log(path)
    with log:
        assert {r.key for r in log.matching(DEVICE, *PROBLEM)} == {"a", "b"}
        assert log.find("bad", DEVICE, *PROBLEM) is None
    assert len(warnings) == 1 and f"{path}, line 2: " in warnings[0] and "skipped" in warnings[0], warnings
    assert fragment in warnings[0], warnings[0]


def test_a_line_cut_short_is_dropped_with_a_warning_and_the_log_goes_on(tmp_path):
    path = tmp_path / "log.jsonl"
    path.write_text(record("a").to_json() + "\n" + '{"key": "b", "dev')
    log, warnings = open_log(path)
    with log:
        log.append(record("c"))
    assert warnings == [f"{path}, line 2: cut short (a run killed while writing it); skipped"]
    assert [json.loads(l)["key"] for l in path.read_text().splitlines()] == ["a", "c"]


def test_a_record_without_a_schema_reads_as_version_1_and_new_ones_carry_it(tmp_path):
    path = tmp_path / "log.jsonl"
    old = {k: v for k, v in valid_line("a").items() if k not in ("schema", "attempts")}
    path.write_text(json.dumps(old) + "\n")
    log, warnings = open_log(path)
    with log:
        assert log.find("a", DEVICE, *PROBLEM).schema == 1 and warnings == []
        log.append(record("b"))
    assert json.loads(path.read_text().splitlines()[-1])["schema"] == SCHEMA


def test_nan_and_negative_times_crown_no_winner(tmp_path):
    path = tmp_path / "log.jsonl"
    lines = [json.dumps(valid_line("real")).replace('"time_ms": 1.0', '"time_ms": 5.0'),
             json.dumps(valid_line("nan")).replace('"time_ms": 1.0', '"time_ms": NaN'),
             json.dumps({**valid_line("negative"), "time_ms": -1.0})]
    path.write_text("\n".join(lines) + "\n")
    log, warnings = open_log(path)
    with log:
        working = [r for r in log.matching(DEVICE, *PROBLEM) if r.ok]
        assert [r.key for r in working] == ["real"] and min(r.time_ms for r in working) == 5.0
        assert log.find("nan", DEVICE, *PROBLEM) is None and log.find("negative", DEVICE, *PROBLEM) is None
    assert len(warnings) == 2


def test_transient_failures_are_retried_a_bounded_number_of_times(tmp_path):
    path = tmp_path / "log.jsonl"
    with ResultLog(path) as log:
        for key, status in [("t", "timeout"), ("c", "crash"), ("l", "launch"), ("w", "wrong"), ("g", "generate"),
                            ("x", "compile")]:
            log.append(record(key, status))
    for attempt in range(2, MAX_ATTEMPTS + 1):
        with ResultLog(path) as log:
            due = {k for k in "tclwgx" if log.settled(k, DEVICE, *PROBLEM) is None}
            assert due == {"t", "c", "l"}, (attempt, due)
            for key in sorted(due):
                log.append(record(key, "timeout"))
                assert log.find(key, DEVICE, *PROBLEM).attempts == attempt, "not again in the same run"
    with ResultLog(path) as log:
        assert all(log.settled(k, DEVICE, *PROBLEM) is not None for k in "tclwgx"), "attempts used up"
        log.append(record("t", "ok"))
    with ResultLog(path, retry_failed=True) as log:
        assert {k for k in "tclwgx" if log.settled(k, DEVICE, *PROBLEM) is None} == set("clwgx")
        log.append(record("w", "ok"))
        assert log.settled("w", DEVICE, *PROBLEM).ok and log.settled("c", DEVICE, *PROBLEM) is None
        assert log.find("c", DEVICE, *PROBLEM).attempts == MAX_ATTEMPTS, "find gives the record either way"


def test_a_second_log_of_a_locked_folder_is_refused_until_the_first_closes(tmp_path):
    with ResultLog(tmp_path / "log.jsonl"):
        with pytest.raises(FolderLockedError, match=f"in use by another lift explore \\(process {os.getpid()}\\)"):
            ResultLog(tmp_path / "log.jsonl")
    with ResultLog(tmp_path / "log.jsonl"):
        pass


def test_a_lock_held_by_a_killed_process_is_free(tmp_path):
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from lift.explore.lock import FolderLock; "
                               "FolderLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(600)",
                               str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderLockedError, match=f"process {holder.pid}"):
            FolderLock(tmp_path).acquire()
    finally:
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(30)
    with FolderLock(tmp_path):
        assert (tmp_path / LOCK_NAME).read_text().strip() == str(os.getpid())


def test_the_log_is_never_written_through_a_symlink_out_of_its_folder(tmp_path):
    outside, folder = tmp_path / "precious.txt", tmp_path / "out"
    folder.mkdir()
    outside.write_text("keep me\n")
    (folder / "log.jsonl").symlink_to(outside)
    with pytest.raises(UnsafePathError, match="outside"):
        ResultLog(folder / "log.jsonl")
    assert outside.read_text() == "keep me\n"
    FolderLock(folder).acquire().release()  # the refused log let go of the folder's lock
    (folder / "inside.jsonl").write_text("")
    (folder / "log.jsonl").unlink()
    (folder / "log.jsonl").symlink_to("inside.jsonl")
    with ResultLog(folder / "log.jsonl") as log:
        log.append(record("a"))
    assert json.loads((folder / "inside.jsonl").read_text())["key"] == "a", "a link inside the folder is followed"


def test_files_are_replaced_whole_and_never_written_through_a_symlink(tmp_path):
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    link = tmp_path / "inputs.npz"
    link.symlink_to(outside)
    replace_with(link, lambda f: np.savez(f, x=np.arange(3)))
    assert outside.read_text() == "keep me\n" and not link.is_symlink()
    assert np.load(link)["x"].tolist() == [0, 1, 2]
    with pytest.raises(ZeroDivisionError):
        replace_with(tmp_path / "half.txt", lambda f: (f.write(b"half"), 1 / 0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["inputs.npz", "precious.txt"], "no temporary left behind"
    write_text(tmp_path / "mode.txt", "x")
    assert (tmp_path / "mode.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_compile_replaces_a_symlinked_output_instead_of_writing_through_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me\n")
    Path("link.cl").symlink_to(outside)
    result = CliRunner().invoke(main, ["compile", str(EXAMPLES / "asum.py"), "--kernel", "asum_intel", "--size",
                                       "N=32768", "--no-check", "-o", "link.cl"])
    assert result.exit_code == 0, result.output
    assert outside.read_text() == "keep me\n" and not Path("link.cl").is_symlink()
    assert Path("link.cl").read_text().startswith("/*\n * lift kernel asum_intel")


@pytest.mark.parametrize("name", ["../x", "a/b", "", "x.cl", "1st", None])
def test_names_that_become_paths_are_identifiers(tmp_path, name):
    with pytest.raises(UnsafePathError, match="must be an identifier"):
        check_name(name)
    with pytest.raises(UnsafePathError):
        winner_paths(tmp_path, name)


def test_a_garbage_bandwidth_file_is_measured_again_with_a_warning(tmp_path, capsys):
    path = tmp_path / "bandwidth.json"
    measured = StreamingBandwidth(10.0, 12.0, 0.01, 1 << 20)
    for garbage in ["not json", "[1, 2]", '{"dev": {"copy_gbps": "fast"}}', '{"dev": {"copy_gbps": NaN, '
                    '"read_gbps": 1, "launch_ms": 1, "nbytes": 1}}', '{"dev": 5}',
                    '{"dev": {"copy_gbps": 1' + "0" * 400 + ', "read_gbps": 1, "launch_ms": 1, "nbytes": 1}}']:
        path.write_text(garbage)
        assert cached(path, "dev", lambda: measured) == measured
        assert "warning: " in capsys.readouterr().err
        assert cached(path, "dev", lambda: pytest.fail("measured twice")) == measured


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
                    max_leaves=8)
FIELDS = list(json.loads(record("k").to_json()))


@st.composite
def log_lines(draw):
    """A line of a log: valid, a valid record with one field replaced or removed, any JSON, or any text."""
    kind = draw(st.sampled_from(["valid", "field", "drop", "json", "text"]))
    base = json.loads(record(draw(st.text(min_size=1, max_size=4)), time_ms=draw(
        st.floats(min_value=1e-6, max_value=1e6))).to_json())
    if kind == "valid":
        return json.dumps(base)
    if kind == "field":
        return json.dumps({**base, draw(st.sampled_from(FIELDS)): draw(JSON)})
    if kind == "drop":
        return json.dumps({k: v for k, v in base.items() if k != draw(st.sampled_from(FIELDS))})
    if kind == "json":
        return json.dumps(draw(JSON))
    return draw(st.text(max_size=40)).replace("\n", " ").replace("\r", " ")


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(log_lines(), max_size=12), st.binary(max_size=20))
@example([json.dumps({**json.loads(record("0").to_json()), "derivation": [math.inf]})], b"")  # found by CI's draw
@example([json.dumps({**json.loads(record("0").to_json()), "time_ms": 10 ** 400})], b"")  # beyond a float: no crash
def test_fuzz_the_log_reader_never_crashes_and_keeps_only_valid_records(lines, tail):
    with tempfile.TemporaryDirectory() as folder, mock.patch.object(os, "fsync"):  # reading is fuzzed, not durability
        path = Path(folder) / "log.jsonl"
        path.write_bytes("".join(l + "\n" for l in lines).encode() + tail)
        log, warnings = open_log(path)
        with log:
            kept = list(log.records.values())
            log.append(record("after"))
        written = path.read_bytes().count(b"\n") + 1
        assert len(warnings) + len(kept) <= written
        for r in kept:
            assert r.status != "ok" or (math.isfinite(r.time_ms) and r.time_ms > 0 and r.gbps > 0)
            assert r.kernel.isidentifier() and all(n > 0 for n in r.sizes.values())
            assert Record.from_json(r.to_json()) == r
        again, later = open_log(path)
        with again:
            assert again.find("after", DEVICE, *PROBLEM) is not None, "the log stays readable after an append"
        assert len(later) <= len(warnings)


# --- manifests of every example, run by a host program that knows nothing of lift ------------------------

LOWERED = [("scal", "scal_vectorised", {"N": 1024}), ("scal", "scal_global", {"N": 1000}),
           ("scal", "scal_vectorised_global", {"N": 4096}), ("asum", "asum_nvidia", {"N": 262144}),
           ("asum", "asum_amd", {"N": 2048}), ("asum", "asum_intel", {"N": 32768}), ("asum", "asum_cpu", {"N": 65536}),
           ("dot", "dot_cpu", {"N": 65536}), ("axpydot", "axpydot_shared", {"N": 4096}),
           ("axpydot", "axpydot_fused", {"N": 4096}),
           ("gemv", "gemv_workgroup", {"M": 8, "N": 64}), ("gemv", "gemv_coalesced", {"M": 5, "N": 128}),
           ("blackscholes", "blackscholes_global", {"N": 1000}), ("md", "md_global", {"P": 100, "K": 8})]


def test_every_lowered_kernel_of_the_examples_is_in_this_list():
    listed = {kernel for _, kernel, _ in LOWERED}
    for stem in {stem for stem, _, _ in LOWERED}:
        pf = load_program_file(EXAMPLES / f"{stem}.py")
        assert {k for k in pf.kernels if k != stem} <= listed, stem


HOST_EACH = """
import runpy, sys
host = sys.argv[1]
for args in sys.argv[2:]:
    sys.argv = [host, *args.split("|")]
    runpy.run_path(host, run_name="__main__")
"""


@needs_device
def test_the_manifest_host_runs_every_example(tmp_path):
    """Every lowered kernel of the examples, BlackScholes' array of tuples included, run from its `.cl` file
    and manifest by the bare host (all in one process that imports nothing of lift), against the interpreter."""
    runs, expected = [], {}
    for stem, kernel, sizes in LOWERED:
        pf = load_program_file(EXAMPLES / f"{stem}.py")
        program = pf.kernels[kernel]
        inputs = pf.inputs(kernel, sizes, seed=1)
        expected[kernel] = interpret(program, *inputs, sizes=sizes)
        cl_path, manifest_path = write_cl(generate(program, kernel, sizes), tmp_path / f"{kernel}.cl")
        np.savez(tmp_path / f"{kernel}.in.npz", **{p.name: np.asarray(to_host(v, p.t, p.name))
                                                   for v, p in zip(inputs, program.params)})
        runs.append("|".join(map(str, [cl_path, manifest_path, tmp_path / f"{kernel}.in.npz",
                                       tmp_path / f"{kernel}.out.npz"])))
    subprocess.run([sys.executable, "-c", HOST_EACH, str(MANIFEST_HOST), *runs],
                   capture_output=True, text=True, check=True, timeout=600)
    for stem, kernel, sizes in LOWERED:
        manifest = json.loads((tmp_path / f"{kernel}.json").read_text())
        want = expected[kernel]
        with np.load(tmp_path / f"{kernel}.out.npz") as out:
            for spec, w in zip(manifest["outputs"], want if isinstance(want, tuple) else (want,)):
                got, w = out[spec["name"]], np.asarray(w)
                for name in (w.dtype.names or (None,)):
                    g, e = (got, w) if name is None else (got[name], w[name])
                    np.testing.assert_allclose(g.reshape(e.shape), e, rtol=2e-3, atol=2e-3, err_msg=kernel)
    assert json.loads((tmp_path / "blackscholes_global.json").read_text())["outputs"][0]["dtype"] == {
        "fields": [{"name": "_0", "dtype": "float32", "offset": 0}, {"name": "_1", "dtype": "float32", "offset": 4}],
        "itemsize": 8}


# --- the explorer on a corrupted folder, and two explorers on one folder ---------------------------------

@needs_device
def test_explore_survives_a_corrupted_log(tmp_path, capsys):
    from lift.explore.candidate import Candidate
    from lift.explore.driver import explore
    from lift.explore.evaluation import TimingPolicy

    pf = load_program_file(EXAMPLES / "asum.py")
    candidates = [Candidate(pf.kernels["asum_intel"]), Candidate(pf.kernels["asum_cpu"])]
    sizes = {"N": 1 << 16}
    fake = {**valid_line(candidates[0].key), "kernel": "asum", "sizes": sizes, "time_ms": -1.0}
    (tmp_path / "log.jsonl").write_text("\n".join([
        json.dumps(fake), json.dumps({**fake, "time_ms": "fast"}), "[1, 2, 3]", "",
        json.dumps(fake).replace('"time_ms": -1.0', '"time_ms": NaN')]) + "\n")
    result = explore(pf, "asum", sizes, candidates, budget_s=300, out_dir=tmp_path, progress=False,
                     timing=TimingPolicy(min_runs=3, max_runs=20, max_s=0.3),
                     bandwidth=StreamingBandwidth(10.0, 10.0, 0.002, 0))
    err = capsys.readouterr().err
    for line in (1, 2, 3, 5):
        assert f"log.jsonl, line {line}: " in err, err
    assert result.evaluated >= 2 and result.skipped == 0, "the bad records count for nothing"
    assert candidates[0].key in {r.key for r in result.ranked if r.ok}, "the candidate of the bad records was measured"
    assert result.winner is not None and 0 < result.winner.time_ms < math.inf
    assert json.loads((tmp_path / "asum.derivation.json").read_text())["key"] == result.winner.key


@needs_device
def test_two_explores_into_one_folder(tmp_path):
    out = tmp_path / "out"
    args = [sys.executable, "-m", "lift.cli", "explore", str(EXAMPLES / "asum.py"), "--size", "N=65536",
            "--budget", "5m", "--max-candidates", "2", "--out", str(out)]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    lock = out / LOCK_NAME
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and first.poll() is None:
        if lock.is_file() and lock.read_text().strip() == str(first.pid):
            break
        time.sleep(0.05)
    second = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=300)
    stdout, stderr = first.communicate(timeout=600)
    assert first.returncode == 0, stderr
    assert second.returncode == 1 and second.stderr.strip().splitlines() == [
        f"error: {out} is in use by another lift explore (process {first.pid}): wait for it to finish, "
        "or give another --out"], second.stderr

    log, warnings = open_log(out / "log.jsonl")
    with log:
        lines = (out / "log.jsonl").read_text().splitlines()
        evaluated = int(re.search(r"(\d+) evaluated now", stdout).group(1))
        again = re.search(r"#1-#(\d+) measured again", stdout)
        assert warnings == [] and len(lines) == evaluated + (int(again.group(1)) if again else 0), \
            "every record is the first run's: none lost, none measured twice"
        identities = [Record.from_json(l).identity for l in lines]
        assert len(set(identities)) == evaluated
        printed = re.search(r"winner: (\d+\.\d{4}) ms, .* written to (\S+)", stdout)
        written = json.loads((out / "asum.derivation.json").read_text())
        assert f"{written['time_ms']:.4f}" == printed.group(1) and printed.group(2).endswith("asum.cl")
        assert log.find(written["key"], written["device"], "asum", {"N": 65536}).time_ms == written["time_ms"]
