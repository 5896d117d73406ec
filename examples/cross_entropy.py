"""The mean cross-entropy loss of a batch of logits as a new user writes it: per row, log(sum(exp(row - max))) + max
minus the logit of the row's label (a user function indexing the row), then the mean over the rows."""

import math

import numpy as np

from lift import ArrayType, Float, Get, Int, Map, Reduce, SizeVar, Zip, fun, userfun

from blas import add

R = SizeVar("R")
C = SizeVar("C")
SIZES = {"R": 4001, "C": 1001}


@userfun
def maxf(x: Float, y: Float) -> Float:
    return max(x, y)


@userfun
def exp_minus(x: Float, m: ArrayType(Float, 1)) -> Float:
    return math.exp(x - m[0])


@userfun
def row_loss(s: ArrayType(Float, 1), m: ArrayType(Float, 1), row: ArrayType(Float, C), label: Int) -> Float:
    return math.log(s[0]) + m[0] - row[label]


@userfun
def mean_of(s: Float, n: Float) -> Float:
    return s / n


def loss(row, label):
    m = Reduce(maxf, -math.inf)(row)
    return row_loss(Reduce(add, 0.0)(Map(lambda v: exp_minus(v, m))(row)), m, row, label)


cross_entropy = fun([ArrayType(ArrayType(Float, C), R), ArrayType(Int, R), Float], lambda logits, labels, rows: Map(
    lambda s: mean_of(s, rows))(Reduce(add, 0.0)(Map(lambda p: loss(Get(p, 0), Get(p, 1)))(Zip(logits, labels)))))


def reference(logits, labels, rows):
    """numpy's mean cross-entropy, in float64."""
    z = logits.astype(np.float64)
    m = z.max(axis=1)
    lse = np.log(np.exp(z - m[:, None]).sum(axis=1)) + m
    return np.array([(lse - z[np.arange(len(z)), labels]).mean()])


def inputs(kernel, sizes, rng):
    """Normal random logits (scale 3), uniform random labels and R as a float."""
    r, c = sizes["R"], sizes["C"]
    return [(3 * rng.standard_normal((r, c))).astype(np.float32), rng.integers(0, c, r).astype(np.int32), np.float32(r)]
