"""Whether the tests have an OpenCL device, and the mark that skips a test without one."""

from pathlib import Path

import pytest

import lift
from lift.opencl_gen import runtime

try:
    runtime.select_device()
    HAVE_DEVICE = True
except lift.LiftError:
    HAVE_DEVICE = False

needs_device = pytest.mark.skipif(not HAVE_DEVICE, reason="no OpenCL device (install pocl-opencl-icd)")

# A bare-PyOpenCL host that runs a generated `.cl` file from its manifest alone (run in a subprocess).
MANIFEST_HOST = Path(__file__).resolve().parent / "manifest_host.py"
