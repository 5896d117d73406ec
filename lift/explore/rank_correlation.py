"""Spearman's rank correlation: how well the cost model's predictions order the measured times of candidates
(`lift explore` reports it per search; `benchmarks/bench_cost_model.py` per program)."""

from __future__ import annotations

import math
from typing import Sequence


def spearman(predicted: Sequence[float], measured: Sequence[float]) -> float:
    """Spearman's rank correlation of two equally long sequences (ties take their average rank)."""
    if len(predicted) != len(measured) or len(predicted) < 2:
        raise ValueError("spearman needs two sequences of equal length, at least 2")
    a, b = _ranks(predicted), _ranks(measured)
    mean = (len(a) + 1) / 2
    cov = sum((x - mean) * (y - mean) for x, y in zip(a, b))
    var = math.sqrt(sum((x - mean) ** 2 for x in a) * sum((y - mean) ** 2 for y in b))
    return cov / var if var else 0.0


def _ranks(values: Sequence[float]) -> list:
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in order[i:j + 1]:
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    return ranks
