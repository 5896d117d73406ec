"""The BLAS sequences of the kernel-fusion paper's Table 1 (`examples/sequences.py`, the `seq` fixture) for the
tests that run them: their names, and checks of their results and of routine calls left in a program."""

import numpy as np

from lift import Routine

SEQUENCES = ["axpydot", "atax", "bicgk", "sgemv", "sgemvt", "sscal", "gemver", "gesummv", "madd", "vadd", "waxpby"]


def _components(v):
    return v if isinstance(v, tuple) else (v,)


def assert_matches(got, want, compiled: bool = False):
    """Equal values, component by component, of equal shapes; with `compiled`, `got` is `lift.compile`'s and a full
    reduction a 0-d array (numpy's shape) where the interpreter and numpy's references have `(1,)`."""
    got, want = _components(got), _components(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w) or (compiled and np.shape(g) == () and np.shape(w) == (1,))
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)


def has_routine(node) -> bool:
    """Whether a routine is still called in `node`."""
    return any(isinstance(n, Routine) for n in node.subterms())
