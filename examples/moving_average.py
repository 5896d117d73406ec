"""A 31-point moving average of a signal as a new user writes it: clamp at the ends, slide windows of 31, the mean
of each."""

import numpy as np

from lift import ArrayType, Float, Join, Map, Pad, Reduce, SizeVar, Slide, fun

from blas import add

N = SizeVar("N")
SIZES = {"N": 4_194_301}
WIDTH = 31

moving_average = fun([ArrayType(Float, N)], lambda x: Join()(Map(lambda w: Map(lambda s: s * (1.0 / WIDTH))(
    Reduce(add, 0.0)(w)))(Slide(WIDTH, 1)(Pad(WIDTH // 2, WIDTH // 2, "clamp")(x)))))


def reference(x):
    """A running sum of the edge-padded signal, in float64."""
    c = np.concatenate(([0.0], np.cumsum(np.pad(x.astype(np.float64), WIDTH // 2, mode="edge"))))
    return (c[WIDTH:] - c[:-WIDTH]) / WIDTH
