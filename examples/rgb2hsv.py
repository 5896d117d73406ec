"""RGB to HSV as a new user writes it: an image of (r, g, b) tuples, the hue chosen by which channel is largest."""

import numpy as np

from lift import ArrayType, Float, Map, SizeVar, fun, userfun

H = SizeVar("H")
W = SizeVar("W")
SIZES = {"H": 1001, "W": 999}


@userfun
def hsv(p: (Float, Float, Float)) -> (Float, Float, Float):
    r = p[0]
    g = p[1]
    b = p[2]
    mx = max(r, max(g, b))
    mn = min(r, min(g, b))
    d = mx - mn
    h = 0.0
    if d > 0.0:
        if mx == r:
            h = (g - b) / d
            if h < 0.0:
                h += 6.0
        elif mx == g:
            h = (b - r) / d + 2.0
        else:
            h = (r - g) / d + 4.0
    s = 0.0
    if mx > 0.0:
        s = d / mx
    return (h / 6.0, s, mx)


rgb2hsv = fun([ArrayType(ArrayType((Float, Float, Float), W), H)], lambda img: Map(Map(hsv))(img))


def reference(img):
    r, g, b = (img[c].astype(np.float64) for c in ("_0", "_1", "_2"))
    mx, mn = np.maximum(r, np.maximum(g, b)), np.minimum(r, np.minimum(g, b))
    d = mx - mn
    safe = np.where(d > 0, d, 1)
    h = np.where(mx == r, ((g - b) / safe) % 6, np.where(mx == g, (b - r) / safe + 2, (r - g) / safe + 4))
    h = np.where(d > 0, h, 0) / 6
    s = np.where(mx > 0, d / np.where(mx > 0, mx, 1), 0)
    return np.stack([h, s, mx], axis=-1)


def inputs(kernel, sizes, rng):
    """Channels in [0, 1)."""
    img = np.zeros((sizes["H"], sizes["W"]), dtype=[("_0", np.float32), ("_1", np.float32), ("_2", np.float32)])
    for c in ("_0", "_1", "_2"):
        img[c] = rng.uniform(0, 1, img.shape)
    return [img]
