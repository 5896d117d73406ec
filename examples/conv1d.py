"""A 1-D convolution with a wide filter as a new user writes it: the signal clamped at both ends, windows of 31, each
window's dot product with the 31 taps (an input)."""

import numpy as np

from lift import ArrayType, Float, Map, Pad, Reduce, SizeVar, Slide, Zip, fun

from blas import add, mult

N = SizeVar("N")
SIZES = {"N": 1_000_003}
TAPS = 31

conv1d = fun([ArrayType(Float, N), ArrayType(Float, TAPS)], lambda x, h: Map(
    lambda w: Reduce(add, 0.0)(Map(mult)(Zip(w, h))))(Slide(TAPS, 1)(Pad(TAPS // 2, TAPS // 2, "clamp")(x))))


def reference(x, h):
    """numpy's correlation of the edge-padded signal with the taps, in float64."""
    p = np.pad(x.astype(np.float64), TAPS // 2, mode="edge")
    return np.correlate(p, h.astype(np.float64), mode="valid")[:, None]
