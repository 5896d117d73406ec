"""BlackScholes: a call and a put option price per stock price (paper Figure 6)."""

import math

import numpy as np

from lift import ArrayType, Float, Map, MapGlb, SizeVar, TupleType, fun, userfun

N = SizeVar("N")
SIZES = {"N": 1 << 22}

STRIKE = 50.0
RATE = 0.02
VOLATILITY = 0.30
YEARS = 1.0


@userfun
def bs_computation(s: Float) -> TupleType(Float, Float):
    """The call and put prices of one option (Black-Scholes with the cumulative normal from erf)."""
    sqrt_t = math.sqrt(YEARS)
    d1 = (math.log(s / STRIKE) + (RATE + 0.5 * VOLATILITY * VOLATILITY) * YEARS) / (VOLATILITY * sqrt_t)
    d2 = d1 - VOLATILITY * sqrt_t
    cnd_d1 = 0.5 * (1.0 + math.erf(d1 * 0.70710678))
    cnd_d2 = 0.5 * (1.0 + math.erf(d2 * 0.70710678))
    discounted = STRIKE * math.exp(-RATE * YEARS)
    call = s * cnd_d1 - discounted * cnd_d2
    put = discounted * (1.0 - cnd_d2) - s * (1.0 - cnd_d1)
    return (call, put)


blackscholes = fun([ArrayType(Float, N)], lambda s: Map(bs_computation)(s))


def inputs(kernel, sizes, rng):
    """Stock prices between 5 and 100."""
    return [rng.uniform(5.0, 100.0, sizes["N"]).astype(np.float32)]

# Lowered: one work-item per option.
blackscholes_global = fun([ArrayType(Float, N)], lambda s: MapGlb(bs_computation)(s))
