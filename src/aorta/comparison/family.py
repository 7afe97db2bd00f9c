"""Many rows, one decision: adjusting p-values across the rows of a comparison.

Each row's test controls its own false alarms: an unchanged row is called FASTER or SLOWER by
chance at most alpha of the time. A comparison judges many rows (every metric, every kernel,
every cell), so with nothing changed at all some row can still come out SLOWER: with 50
unchanged kernels at 5% noise, in 17% of comparisons at a 2% threshold and in about half at
threshold 0 (measured). `--correction` trades power for a guarantee over the whole family:

- `holm`: Holm's step-down procedure (Holm 1979, "A simple sequentially rejective multiple
  test procedure", Scand. J. Statist. 6(2):65-70) keeps the chance of any false alarm among
  the family at or below alpha, under any dependence between rows;
- `bh`: Benjamini & Hochberg (1995, JRSS B 57(1):289-300) keeps the expected share of false
  alarms among the rows flagged at or below alpha; valid for independent rows and for the
  positive dependence that kernels of one run show (Benjamini & Yekutieli 2001, Ann.
  Statist. 29(4):1165-1188).

Adjusted p-values (Wright 1992, Biometrics 48(4):1005-1013): with p_(1) <= ... <= p_(m),
    holm: q_(i) = max over j <= i of min(1, (m - j + 1) p_(j))
    bh:   q_(i) = min over j >= i of min(1, m p_(j) / j)
and a row is significant when q <= alpha. The family is every row whose test could reach
alpha on its own (sizes too small to ever be significant can never be a false alarm, so
leaving them out is safe), across all compared cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Correction = Literal["none", "holm", "bh"]
CORRECTIONS: tuple[str, ...] = ("none", "holm", "bh")


def adjust(p_values: Sequence[float], method: Correction) -> list[float]:
    """Adjusted p-values in the input's order (`none` returns them unchanged)."""
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
