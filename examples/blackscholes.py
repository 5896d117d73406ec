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
    """The call and put prices of one option: Black-Scholes with the cumulative normal distribution by the
    polynomial of NVIDIA's SDK (Abramowitz and Stegun 26.2.17), as the paper's benchmark computes it."""
    sqrt_t = math.sqrt(YEARS)
    d1 = (math.log(s / STRIKE) + (RATE + 0.5 * VOLATILITY * VOLATILITY) * YEARS) / (VOLATILITY * sqrt_t)
    d2 = d1 - VOLATILITY * sqrt_t
    k1 = 1.0 / (1.0 + 0.2316419 * abs(d1))
    k2 = 1.0 / (1.0 + 0.2316419 * abs(d2))
    c1 = 0.3989422804014327 * math.exp(-0.5 * d1 * d1) * k1 * (
        0.31938153 + k1 * (-0.356563782 + k1 * (1.781477937 + k1 * (-1.821255978 + k1 * 1.330274429))))
    c2 = 0.3989422804014327 * math.exp(-0.5 * d2 * d2) * k2 * (
        0.31938153 + k2 * (-0.356563782 + k2 * (1.781477937 + k2 * (-1.821255978 + k2 * 1.330274429))))
    cnd_d1 = 1.0 - c1 if d1 > 0.0 else c1
    cnd_d2 = 1.0 - c2 if d2 > 0.0 else c2
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
