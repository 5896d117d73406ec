"""MD's hand-written variants (`benchmarks.bench_md_variants`) at a small size: each one's forces agree with numpy's
(it is timed only then). No timing is asserted."""

import pytest

pytest.importorskip("pyopencl")

from benchmarks.bench_md_variants import main  # noqa: E402


def test_every_md_variant_agrees_with_numpy(device):
    measured = main(["--atoms", "512", "--neighbours", "16", "--runs", "5"])
    assert len(measured) == 11
    assert all(m.ok for m in measured.values()), {name: m.reason for name, m in measured.items() if not m.ok}
