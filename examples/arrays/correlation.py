"""PolyBench's correlation written with lift arrays as a numpy user writes it: column means and standard
deviations, the data standardised, and corr = Zᵀ Z (`python examples/arrays/correlation.py`)."""

import math

import numpy as np

import lift

EPS = 0.1


def correlation(data):
    """The correlation matrix of the columns of `data` (N samples of M variables), numpy or lift arrays."""
    xp = lift if isinstance(data, lift.arrays.LiftArray) else np
    n = data.shape[0]
    mean = data.mean(axis=0)
    centred = data - mean
    std = xp.sqrt((centred * centred).mean(axis=0))
    std = xp.where(std <= EPS, 1.0, std)
    z = centred / (std * math.sqrt(n))
    return z.T @ z


if __name__ == "__main__":
    data = np.random.default_rng(0).uniform(-1, 1, (1001, 251)).astype(np.float32)
    got = np.asarray(correlation(lift.asarray(data)))
    print("max |lift - numpy|:", np.abs(got - correlation(data.astype(np.float64))).max())
