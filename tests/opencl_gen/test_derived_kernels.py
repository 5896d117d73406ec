"""The paper's derivations end in kernels: derived from the high-level programs by the rules, compiled,
run on the OpenCL CPU device, and compared with the reference interpreter (issue 4, section 5)."""

import numpy as np
import pytest

import lift
from lift import interpret
from lift.opencl_gen import runtime
from lift.opencl_gen.compiled import compile
from lift.rules import paper_derivations as pd

try:
    runtime.select_device()
except lift.LiftError:
    pytest.skip("no OpenCL device (install pocl-opencl-icd)", allow_module_level=True)

CASES = [
    ("asum", "asum", pd.FIGURE_9A, {"N": 262144 * 2}),
    ("asum", "asum", pd.FIGURE_9B, {"N": 2048 * 64}),
    ("asum", "asum", pd.FIGURE_9C, {"N": 32768 * 8}),
    ("asum", "asum", pd.TWO_KERNEL_SUM, {"N": 1024 * 40}),
    ("asum", "asum", pd.FIGURE_8 + pd.step("map-to-global", "body.args0.args0", dim=0) + pd.step("reduce-to-seq", "body"),
     {"N": 128 * 300}),
    ("scal", "scal", pd.FIGURE_2, {"N": 1024 * 9}),
    ("gemv", "gemv", pd.GEMV_WORKGROUP_PER_ROW, {"M": 33, "N": 1024}),
]


@pytest.mark.parametrize("stem, kernel, derivation, sizes", CASES,
                         ids=["figure-9a", "figure-9b", "figure-9c", "two-kernel-sum", "figure-8-lowered", "figure-2",
                              "gemv-workgroup-per-row"])
def test_derived_kernel_runs_and_agrees_with_the_interpreter(examples, stem, kernel, derivation, sizes):
    pf = examples[stem]
    source = pf.kernels[kernel]
    derived = derivation.replay(source)
    inputs = pf.inputs(kernel, sizes, seed=11)
    want = interpret(source, *inputs)
    got = compile(derived, sizes=sizes, name=kernel)(*inputs)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
