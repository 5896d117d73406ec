"""Whether the tests have an OpenCL device, and the mark that skips a test without one."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

import pytest

import lift
from lift.opencl_gen import runtime

try:
    runtime.select_device()
    HAVE_DEVICE = True
except lift.LiftError:
    HAVE_DEVICE = False

needs_device = pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device (install pocl-opencl-icd)")


def vector_lowering(program, sizes: dict):
    """The default lowering for a device that vectorises (native float width `LANES`), whatever device runs the
    test: a test asserting what the vector, row-block and window rules derive passes it as `lowering=`, since on a
    device of native width 1 (NVIDIA's GPUs) the default lowering derives none of them."""
    from lift.rules.default_lowering import LANES, default_lowering
    return default_lowering(program, sizes, vector_width=LANES)

# A bare-PyOpenCL host that runs a generated `.cl` file from its manifest alone (run in a subprocess).
MANIFEST_HOST = Path(__file__).resolve().parent / "manifest_host.py"

OCLGRIND = shutil.which("oclgrind")
needs_oclgrind = pytest.mark.skipif(OCLGRIND is None, reason="oclgrind is not installed (apt-get install oclgrind)")
_OCLGRIND_ERRORS = ("Invalid read", "Invalid write", "data race", "Uninitialized", "error detected")


def run_under_oclgrind(path, kernel: str, sizes: dict, inputs, tmp_path, unoptimised: bool = False) -> list:
    """Run `kernel` of the program file at `path` in oclgrind with its data-race and uninitialised-memory
    checks; assert it reports nothing and give the outputs (one array per output).

    `unoptimised` builds with `-cl-opt-disable` (and no binary cache): oclgrind 21.10's uninitialised-memory
    plugin stops at LLVM's `freeze`, which the optimiser inserts where a kernel computes both `i / 3` and
    `i % 3` (the index of a joined window)."""
    np.savez(tmp_path / "inputs.npz", *inputs)
    options = ["--build-options", "-cl-opt-disable"] if unoptimised else []
    env = {**os.environ, "PYOPENCL_NO_CACHE": "1"} if unoptimised else None
    result = subprocess.run(
        [OCLGRIND, "--data-races", "--uninitialized", *options, sys.executable,
         str(Path(__file__).resolve().parent / "oclgrind_run.py"), str(path), kernel, json.dumps(sizes),
         str(tmp_path / "inputs.npz"), str(tmp_path / "out.npz")], capture_output=True, text=True, timeout=600,
        env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    errors = [line for line in result.stderr.splitlines() if any(k in line for k in _OCLGRIND_ERRORS)]
    assert not errors, result.stderr[-3000:]
    with np.load(tmp_path / "out.npz") as out:
        return [out[f"arr_{i}"] for i in range(len(out.files))]
