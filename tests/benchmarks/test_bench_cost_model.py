"""The cost model's benchmark (`benchmarks.bench_cost_model`): a tiny search is saved, then ranked again from the
saved candidates alone. No timing is asserted."""

import json
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyopencl")
ROOT = str(Path(__file__).resolve().parents[2])
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from benchmarks.bench_cost_model import main, predicted_now  # noqa: E402


def test_measured_candidates_are_saved_and_predicted_again(device, tmp_path, capsys):
    main(["measure", "--only", "asum", "--budget", "20", "--max-candidates", "3", "--scale", "4096",
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
