"""PolyBench's linear algebra and stencils written as a new user would (`examples/atax.py`, `bicg.py`, `mvt.py`,
`gesummv.py`, `twomm.py`, `covariance.py`, `heat3d.py`, `jacobi1d_steps.py`; nothing tuned), compiled by
`lift.compile` with the default lowering at small odd sizes, against their numpy references and the
interpreter; and `examples/arrays/correlation.py` through lift arrays."""

from pathlib import Path

import numpy as np
import pytest

import lift

from opencl_device import needs_device


@needs_device
@pytest.mark.parametrize("name, sizes", [
    ("atax", {"M": 37, "N": 23}), ("bicg", {"M": 29, "N": 40}), ("mvt", {"N": 37}), ("gesummv", {"N": 43}),
    ("twomm", {"NI": 7, "NJ": 11, "NK": 19, "NL": 17}), ("covariance", {"M": 17, "N": 23}),
    ("heat3d", {"O": 5, "M": 7, "N": 17}), ("jacobi1d_steps", {"N": 1009}),
])
def test_polybench_programs_compute_numpy_s(examples, name, sizes):
    pf = examples[name]
    inputs = pf.inputs(name, sizes, seed=3)
    got = lift.compile(pf.kernels[name], lowering="default")(*inputs)
    want = pf.namespace["reference"](*inputs)
    interpreted = lift.interpret(pf.kernels[name], *inputs, numpy_shapes=True)
    for g, w, i in zip(*((x if isinstance(x, tuple) else (x,)) for x in (got, want, interpreted))):
        np.testing.assert_allclose(g, np.reshape(w, np.shape(g)), rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(g, np.reshape(i, np.shape(g)), rtol=1e-4, atol=1e-5)


@needs_device
def test_correlation_through_lift_arrays_is_numpy_s(monkeypatch):
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "examples" / "arrays"))
    from correlation import correlation

    data = np.random.default_rng(4).uniform(-1, 1, (101, 37)).astype(np.float32)
    data[:, 5] = 0.25                                   # a constant column: its deviation is taken as 1
    with lift.config(placement="device"):
        got = np.asarray(correlation(lift.asarray(data)))
    np.testing.assert_allclose(got, correlation(data.astype(np.float64)), rtol=1e-4, atol=1e-5)
