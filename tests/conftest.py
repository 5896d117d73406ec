"""Shared test fixtures: the example program files, loaded once per session."""

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from lift.ir.program_file import load_program_file

os.environ.setdefault("LIFT_DEBUG_PASSES", "1")  # validate the program after every code-generation pass

# Property tests: random examples by default; CI replays a fixed sequence (a red CI is a regression, never a
# draw); `make fuzz` draws many more examples to find what the default misses.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("fuzz", max_examples=1000, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.fixture(autouse=True)
def tuning_database(tmp_path_factory, monkeypatch):
    """Each test its own empty tuning database (`lift.explore.tuning_database`), never the user's."""
    root = tmp_path_factory.mktemp("tuning")
    monkeypatch.setenv("LIFT_TUNING_DB", str(root))
    return root


@pytest.fixture(scope="session")
def examples():
    """Program files of `examples/`, by stem: `examples["asum"].kernels["asum_intel"]`."""
    return {p.stem: load_program_file(p) for p in sorted(EXAMPLES.glob("*.py")) if p.stem not in ("blas", "blas_routines")}


@pytest.fixture(scope="session")
def seq(examples):
    """The BLAS sequences of the kernel-fusion paper's Table 1 (`examples/sequences.py`)."""
    return examples["sequences"]


@pytest.fixture(scope="session")
def device():
    """The default OpenCL device; tests that need one are skipped where there is none."""
    from lift.errors import LiftError
    from lift.opencl_gen import runtime
    try:
        return runtime.select_device()
    except LiftError as e:
        pytest.skip(f"no OpenCL device (install pocl-opencl-icd): {e}")
