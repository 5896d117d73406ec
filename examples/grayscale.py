"""RGB to grayscale as a new user writes it: an image of (r, g, b) tuples, ITU-R BT.601's luma of each pixel."""

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, fun, userfun

H = SizeVar("H")
W = SizeVar("W")
SIZES = {"H": 4096, "W": 4096}


@userfun
def luma(p: (Float, Float, Float)) -> Float:
    return 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2]


grayscale = fun([ArrayType(ArrayType((Float, Float, Float), W), H)], lambda img: Map(Map(luma))(img))


def reference(img):
    return 0.299 * img["_0"] + 0.587 * img["_1"] + 0.114 * img["_2"]


def inputs(kernel, sizes, rng):
    """Channels in [0, 1)."""
    img = np.zeros((sizes["H"], sizes["W"]), dtype=[("_0", np.float32), ("_1", np.float32), ("_2", np.float32)])
    for c in ("_0", "_1", "_2"):
        img[c] = rng.uniform(0, 1, img.shape)
    return [img]
