"""N-body: one all-pairs step of a gravitational simulation (Lift's `nbody` benchmark, after NVIDIA's SDK).

Each body is a `float4` position (x, y, z and its mass in w) and a `float4` velocity. The acceleration of a
body is the sum, over all bodies, of the softened attraction `m_q * d / (|d|^2 + eps^2)^(3/2)` with
`d = q - p` (a body exerts no force on itself: `d = 0`); the step then moves each body by `v*dt + a*dt^2/2`.
Written as Lift writes it: a map over bodies of a reduction over all bodies of a user function.
"""

import math

import numpy as np

from lift import ArrayType, Float, Join, Map, Reduce, SizeVar, TupleType, VectorType, Vectorize, Zip, fun, userfun

N = SizeVar("N")
SIZES = {"N": 16384}

Float4 = VectorType(Float, 4)


@userfun
def accelerate(p: Float4, q: Float4, eps2: Float) -> Float4:
    """The acceleration of the body at `p` by the body at `q` (`q.w` its mass), softened by `eps2`."""
    dx = q.x - p.x
    dy = q.y - p.y
    dz = q.z - p.z
    inv = 1.0 / math.sqrt(dx * dx + dy * dy + dz * dz + eps2)
    s = q.w * inv * inv * inv
    return Float4(dx * s, dy * s, dz * s, 0.0)


@userfun
def add4(a: Float4, b: Float4) -> Float4:
    return a + b


@userfun
def move(p: Float4, v: Float4, a: Float4, dt: Float) -> TupleType(Float4, Float4):
    """The body's new position (its mass kept) and velocity after a step of `dt`."""
    position = Float4(p.x + v.x * dt + 0.5 * a.x * dt * dt, p.y + v.y * dt + 0.5 * a.y * dt * dt,
                      p.z + v.z * dt + 0.5 * a.z * dt * dt, p.w)
    return (position, v + a * dt)


def acceleration(pos, eps2):
    """The acceleration of the body at `p` by every body of `pos`: a one-element array, as `reduce` returns."""
    return lambda p: Reduce(add4, Vectorize(4, 0.0))(Map(lambda q: accelerate(p, q, eps2))(pos))


nbody = fun([ArrayType(Float4, N), ArrayType(Float4, N), Float, Float],
            lambda pos, vel, eps2, dt: Join()(Map(
                lambda p, v: Map(lambda a: move(p, v, a, dt))(acceleration(pos, eps2)(p))
            )(Zip(pos, vel))))


def inputs(kernel, sizes, rng):
    """Bodies in a unit cube with masses between 0.5 and 1.5 and small velocities; eps^2 = 0.01, dt = 0.005."""
    n = sizes["N"]
    pos = rng.uniform(-1.0, 1.0, (n, 4)).astype(np.float32)
    pos[:, 3] = rng.uniform(0.5, 1.5, n)
    vel = rng.uniform(-0.1, 0.1, (n, 4)).astype(np.float32)
    vel[:, 3] = 0.0
    return [pos, vel, np.float32(0.01), np.float32(0.005)]
