"""MD: molecular dynamics, the force on each particle from its neighbours (paper Figure 7, SHOC's MD)."""

import numpy as np

from lift import (ArrayType, Float, Int, Map, MapGlb, ReduceSeq, SizeVar, VectorType, Vectorize, Zip, fun,
                  userfun)

P = SizeVar("P")
K = SizeVar("K")
SIZES = {"P": 12288, "K": 128}

Float4 = VectorType(Float, 4)
LJ1 = 1.5
LJ2 = 2.0


@userfun
def update_f(f: Float4, nid: Int, p: Float4, particles: ArrayType(Float4, P), t: Float) -> Float4:
    """Add the Lennard-Jones force of neighbour `nid` on particle `p` to `f`, when it lies within the cutoff `t`."""
    n = particles[nid]
    dx = p.x - n.x
    dy = p.y - n.y
    dz = p.z - n.z
    r2 = dx * dx + dy * dy + dz * dz
    r2inv = 1.0 / r2
    r6inv = r2inv * r2inv * r2inv
    force = r2inv * r6inv * (LJ1 * r6inv - LJ2)
    return f + Float4(dx * force, dy * force, dz * force, 0.0) if r2 < t else f


md = fun([ArrayType(Float4, P), ArrayType(ArrayType(Int, K), P), Float],
         lambda particles, neighbours, t: Map(
             lambda p, ns: ReduceSeq(lambda f, nid: update_f(f, nid, p, particles, t), Vectorize(4, 0.0))(ns)
         )(Zip(particles, neighbours)))

# Lowered: one work-item per particle, a sequential fold over its neighbours.
md_global = fun([ArrayType(Float4, P), ArrayType(ArrayType(Int, K), P), Float],
                lambda particles, neighbours, t: MapGlb(
                    lambda p, ns: ReduceSeq(lambda f, nid: update_f(f, nid, p, particles, t), Vectorize(4, 0.0))(ns)
                )(Zip(particles, neighbours)))


def inputs(kernel, sizes, rng):
    """Particles in a box and, for each, `K` distinct neighbours other than itself (as SHOC builds them)."""
    p, k = sizes["P"], sizes["K"]
    positions = rng.uniform(0.0, 20.0, (p, 4)).astype(np.float32)
    positions[:, 3] = 0.0
    offsets = rng.integers(1, p, (p, k))
    neighbours = ((np.arange(p)[:, None] + offsets) % p).astype(np.int32)
    return [positions, neighbours, np.float32(16.0)]
