"""A CNN layer's 3x3 convolution as a new user writes it: `C` input channels of `H x W`, `K` filters of `C x 3 x 3`,
the edges clamped; each output pixel the sum over the channels of the 3x3 neighbourhoods weighted by its filter.
`conv2d` flattens each pixel's channel windows into one dot product; `conv2d_channels` sums the channels' 3x3 dot
products."""

import numpy as np

from lift import ArrayType, Float, Get, Join, Map, Pad, Reduce, SizeVar, Slide, Transpose, Zip, fun

from blas import add, mult

C, K, H, W = SizeVar("C"), SizeVar("K"), SizeVar("H"), SizeVar("W")
SIZES = {"C": 16, "K": 32, "H": 128, "W": 128}

IMAGE = ArrayType(ArrayType(ArrayType(Float, W), H), C)
FILTERS = ArrayType(ArrayType(ArrayType(ArrayType(Float, 3), 3), C), K)


def windows(a):
    """The 3x3 neighbourhoods of a channel, clamped at its edges."""
    return Map(Transpose())(Slide(3, 1)(Map(Slide(3, 1))(Pad(1, 1, "clamp")(Map(Pad(1, 1, "clamp"))(a)))))


def pixels(x):
    """For each pixel, its neighbourhood in every channel: `[H][W][C][3][3]`."""
    return Map(Transpose())(Transpose()(Map(windows)(x)))


def flat(a):
    return Join()(Map(Join())(a))


def dot(a, b):
    return Reduce(add, 0.0)(Map(mult)(Zip(a, b)))


conv2d = fun([IMAGE, FILTERS], lambda x, wts: Map(lambda wk: Map(Map(lambda nb: dot(flat(nb), flat(wk))))(pixels(x)))(wts))

conv2d_channels = fun([IMAGE, FILTERS], lambda x, wts: Map(lambda wk: Map(Map(lambda nb: Reduce(add, 0.0)(Join()(Map(
    lambda pair: dot(Join()(Get(0)(pair)), Join()(Get(1)(pair))))(Zip(nb, wk))))))(pixels(x)))(wts))


def reference(x, wts):
    p = np.pad(x, ((0, 0), (1, 1), (1, 1)), mode="edge").astype(np.float64)
    h, w = x.shape[1:]
    out = np.zeros((wts.shape[0], h, w))
    for i in range(3):
        for j in range(3):
            out += np.einsum("kc,chw->khw", wts[:, :, i, j], p[:, i:i + h, j:j + w])
    return out



def inputs(kernel, sizes, rng):
    """Uniform random values in [-1, 1)."""
    return [rng.uniform(-1, 1, (sizes["C"], sizes["H"], sizes["W"])).astype(np.float32),
            rng.uniform(-1, 1, (sizes["K"], sizes["C"], 3, 3)).astype(np.float32)]
