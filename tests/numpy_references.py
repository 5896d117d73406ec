"""numpy references of the paper's BlackScholes and MD (Figures 6 and 7) and of the N-body example, shared by the tests."""

import math

import numpy as np


def black_scholes(s):
    s = s.astype(np.float64)
    k, r, v, t = 50.0, 0.02, 0.30, 1.0
    d1 = (np.log(s / k) + (r + 0.5 * v * v) * t) / (v * math.sqrt(t))
    d2 = d1 - v * math.sqrt(t)
    cnd = np.vectorize(lambda z: 0.5 * (1 + math.erf(z / math.sqrt(2))))
    call = s * cnd(d1) - k * math.exp(-r * t) * cnd(d2)
    put = k * math.exp(-r * t) * cnd(-d2) - s * cnd(-d1)
    return call, put


def md(positions, neighbours, cutoff):
    p = positions[:, None, :3].astype(np.float64)
    n = positions[neighbours][:, :, :3].astype(np.float64)
    d = p - n
    r2 = (d * d).sum(-1)
    r2inv = 1.0 / r2
    r6inv = r2inv ** 3
    force = r2inv * r6inv * (1.5 * r6inv - 2.0)
    force = np.where(r2 < cutoff, force, 0.0)
    out = np.zeros((len(positions), 4))
    out[:, :3] = (d * force[..., None]).sum(1)
    return out


def nbody(pos, vel, eps2, dt):
    """One all-pairs step (examples/nbody.py): new positions (mass kept) and velocities."""
    p = pos.astype(np.float64)
    d = p[None, :, :3] - p[:, None, :3]
    inv = 1.0 / np.sqrt((d * d).sum(-1) + eps2)
    a = (d * (p[None, :, 3] * inv ** 3)[..., None]).sum(1)
    v = vel[:, :3].astype(np.float64)
    new_pos, new_vel = p.copy(), np.zeros_like(p)
    new_pos[:, :3] += v * dt + 0.5 * a * dt * dt
    new_vel[:, :3] = v + a * dt
    return new_pos, new_vel
