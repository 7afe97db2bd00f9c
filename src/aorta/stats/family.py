"""Adjusting p-values across the rows of a comparison, `--correction` (why: docs/compare.md).

- `holm` (Holm 1979, Scand. J. Statist. 6(2):65-70): the chance of any false alarm <= alpha,
  under any dependence between rows;
- `bh` (Benjamini & Hochberg 1995, JRSS B 57(1):289-300): the expected share of false alarms
  among rows flagged <= alpha; valid for independent rows and for the positive dependence of
  kernels of one run (Benjamini & Yekutieli 2001, Ann. Statist. 29(4):1165-1188).

Adjusted p-values (Wright 1992, Biometrics 48(4):1005-1013): with p_(1) <= ... <= p_(m),
    holm: q_(i) = max over j <= i of min(1, (m - j + 1) p_(j))
    bh:   q_(i) = min over j >= i of min(1, m p_(j) / j)
and a row is significant when q <= alpha.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal, get_args

Correction = Literal["none", "holm", "bh"]
CORRECTIONS: tuple[str, ...] = get_args(Correction)


def adjust(p_values: Sequence[float], method: Correction) -> list[float]:
    """Adjusted p-values in input order (`none`: unchanged); ValueError for another method."""
    if method == "none" or not p_values:
        return list(p_values)
    m = len(p_values)
    order = sorted(range(m), key=lambda k: p_values[k])
    adjusted = [0.0] * m
    if method == "holm":
        running = 0.0
        for rank, k in enumerate(order):
            running = max(running, min(1.0, (m - rank) * p_values[k]))
            adjusted[k] = running
    elif method == "bh":
        running = 1.0
        for rank in range(m - 1, -1, -1):
            k = order[rank]
            running = min(running, min(1.0, p_values[k] * (m / (rank + 1))))
            adjusted[k] = running
    else:
        raise ValueError(f"correction must be one of {CORRECTIONS}, got {method!r}")
    return adjusted
