"""Single-head attention softmax(Q Kᵀ / sqrt(d)) V written with lift arrays as a numpy user writes it
(`python examples/arrays/attention.py`)."""

import math

import numpy as np

import lift


def attention(Q, K, V):
    """softmax(Q Kᵀ / sqrt(d)) V, numpy or lift arrays."""
    xp = lift if isinstance(Q, lift.arrays.LiftArray) else np
    s = (Q @ K.T) * (1.0 / math.sqrt(Q.shape[1]))
    e = xp.exp(s - s.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)) @ V


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    Q, K, V = (rng.uniform(-1, 1, (257, 61)).astype(np.float32) for _ in range(3))
    got = np.asarray(attention(lift.asarray(Q), lift.asarray(K), lift.asarray(V)))
    want = attention(Q.astype(np.float64), K.astype(np.float64), V.astype(np.float64))
    print("max |lift - numpy|:", np.abs(got - want).max())
