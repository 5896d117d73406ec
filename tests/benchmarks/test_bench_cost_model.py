"""The cost model's benchmark (`benchmarks.bench_cost_model`): a tiny search is saved, ranked again from the
saved candidates alone, re-timed in interleaved rounds and ranked against those. No timing is asserted."""

import json

import pytest

pytest.importorskip("pyopencl")

from benchmarks.bench_cost_model import main, predicted_now  # noqa: E402


def test_measured_candidates_are_saved_predicted_and_retimed(device, tmp_path, capsys):
    main(["measure", "--only", "asum", "--budget", "300", "--max-candidates", "3", "--scale", "4096",
          "--out", str(tmp_path)])
    saved = json.loads((tmp_path / "asum.json").read_text())
    assert saved["sizes"] == {"N": 1 << 16} and len(saved["candidates"]) >= 2
    assert all(c["time_ms"] > 0 and c["predicted_ms"] > 0 for c in saved["candidates"])
    assert predicted_now(saved) == pytest.approx([c["predicted_ms"] for c in saved["candidates"]])
    capsys.readouterr()
    main(["rank", "--only", "asum", "--out", str(tmp_path)])
    (line,) = [row.split() for row in capsys.readouterr().out.splitlines() if row.startswith("asum")]
    assert line[:3] == ["asum", "N=65536", str(len(saved["candidates"]))]
    assert line[3] == line[4], "the same model ranks the same candidates alike"
    main(["retime", "--only", "asum", "--rounds", "2", "--out", str(tmp_path)])
    retimed = json.loads((tmp_path / "asum.json").read_text())
    assert retimed["retimed"]["rounds"] == 2
    assert all(len(c["rounds_ms"]) == 2 and c["retimed_ms"] == pytest.approx(sum(c["rounds_ms"]) / 2)
               for c in retimed["candidates"])
    capsys.readouterr()
    main(["rank", "--only", "asum", "--out", str(tmp_path)])
    (line,) = [row.split() for row in capsys.readouterr().out.splitlines() if row.startswith("asum")]
    assert all(-1 <= float(rho) <= 1 for rho in line[3:8]), "then, now, re-timed, search and halves"
    assert float(line[8]) > 0, "predicted over measured"
