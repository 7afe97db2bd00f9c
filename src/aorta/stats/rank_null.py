"""Exact null distributions of the Mann-Whitney statistic, without ties and with them.

Under "no difference" every split of the N = n1 + n2 pooled values between the two samples is
equally likely, so an exact p counts splits. Untied: the splits giving U = u are the coefficient
of q^u in the Gaussian binomial [N choose n1](q) (Mann & Whitney 1947, Ann. Math. Statist.
18(1):50-60). Tied values share their mid-rank, and the law depends on the tie pattern (the
untied one understates p there: docs/compare.md). It comes from the shift algorithm
(Streitberg & Roehmel 1986, Statistical Software Newsletter 12(1):10-17; the recursion of
coin's `wilcox_test(distribution = "exact")`): over the tie groups in order, group g holding
t_g values of doubled mid-rank s_g, the ways to draw c values with rank sum k grow as
    ways[c][k] += sum over d = 1..t_g of C(t_g, d) * ways[c - d][k - d s_g].
Each ways[c] is one Python integer, a fixed-width bit field per k (wide enough for C(N, m), so
fields never carry): a step is a shift and an add done in C. The cost grows steeply with the
sample size (figures: bench/bench_rank_ties.py), so callers count only up to
`rank_test.TIED_EXACT_LIMIT` trials per side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache, reduce
from itertools import accumulate


@lru_cache(maxsize=256)
def untied_cumulative(n1: int, n2: int) -> tuple[int, ...]:
    """Running totals of the splits with U = 0, 1, ..., n1*n2 (untied values): the Gaussian
    binomial [n1+n2 choose n1](q) as the product over i of (1 - q^(n2+i)) / (1 - q^i), whose
    partial products are Gaussian binomials too, so integer arithmetic stays exact."""
    n1, n2 = min(n1, n2), max(n1, n2)
    coeffs = [1]
    for i in range(1, n1 + 1):
        grown = coeffs + [0] * (n2 + i)
        for d in range(len(grown) - 1, n2 + i - 1, -1):   # times (1 - q^(n2+i))
            grown[d] -= grown[d - (n2 + i)]
        for d in range(i, len(grown)):                    # divided by (1 - q^i)
            grown[d] += grown[d - i]
        coeffs = grown[: i * n2 + 1]
    return tuple(accumulate(coeffs))


def tied_tails(groups: Sequence[int], drawn: int, low: int, high: int) -> tuple[int, int]:
    """Exact counts for a rank sum with ties: `groups` are tie-group sizes in value order (N
    values), `drawn` how many one sample takes, T twice its rank sum (s_g = 2 x the values
    before group g + t_g + 1). Returns (splits with T <= low, splits with T >= high) of
    C(N, drawn). ValueError when `drawn` is not in 0..N."""
    n = sum(groups)
    scores = [2 * b + size + 1 for b, size in zip(accumulate(groups, initial=0), groups)]
    if not 0 <= drawn <= n:
        raise ValueError(f"cannot draw {drawn} of {n} values")
    width = math.comb(n, drawn).bit_length() + 1
    # T >= high is the lower tail of mirrored ranks: (N + 1) - rank mirrors each mid-rank,
    # so the doubled scores become 2 (N + 1) - s_g, the groups in reverse order.
    mirrored = [2 * (n + 1) - s for s in reversed(scores)]
    sides = [_reduced(groups, scores, drawn, low),
             _reduced(groups[::-1], mirrored, drawn, 2 * drawn * (n + 1) - high)]
    work = sum(limit + 1 for _, limit in sides if limit >= 0)
    steps, low_limit = sides[0]
    _, below_high = _reduced(groups, scores, drawn, high - 1)
    if low < high and below_high + 1 < work:
        # Near the centre both tails are wide; one count up to `high` is cheaper, and gives
        # T >= high as the complement of T <= high - 1.
        fields = _count(steps, drawn, width, below_high) if below_high >= 0 else 0
        below = _fields_total(fields, width, low_limit)
        return below, math.comb(n, drawn) - _fields_total(fields, width, below_high)
    below, above = (_fields_total(_count(steps, drawn, width, limit), width, limit)
                    if limit >= 0 else 0 for steps, limit in sides)
    return below, above


def _fields_total(fields: int, width: int, limit: int) -> int:
    """The sum of the first limit + 1 fields of `width` bits: modulo 2^width - 1 a field
    weighs 1, and no sum of counts reaches the modulus."""
    if limit < 0:
        return 0
    return (fields & ((1 << (width * (limit + 1))) - 1)) % ((1 << width) - 1)


def _reduced(sizes: Sequence[int], scores: Sequence[int], drawn: int,
             bound: int) -> tuple[list[tuple[int, int]], int]:
    """(steps, limit): the groups as (size, reduced score) with reduced scores
    (s - s_first) / gcd, and the largest reduced sum at or below `bound` (-1 for none)."""
    shift = scores[0]
    unit = reduce(math.gcd, (s - shift for s in scores), 0) or 1
    steps = [(size, (s - shift) // unit) for size, s in zip(sizes, scores)]
    limit = math.floor((bound - drawn * shift) / unit)
    return steps, min(limit, drawn * steps[-1][1])


def _count(steps: Sequence[tuple[int, int]], drawn: int, width: int, limit: int) -> int:
    """The ways to draw exactly `drawn` values with each reduced sum k <= `limit`, field k of
    `width` bits. Sums only grow along the walk, so fields past `limit` are dropped at once."""
    keep = (1 << (width * (limit + 1))) - 1
    ways = [1] + [0] * drawn
    seen, total = 0, sum(size for size, _ in steps)
    for size, score in steps:
        seen += size
        lowest = max(1, drawn - (total - seen))  # fewer drawn now can never reach `drawn`
        shift = width * score
        if size == 1:                            # most groups: one value, one term
            for c in range(min(drawn, seen), lowest - 1, -1):
                ways[c] = (ways[c] + (ways[c - 1] << shift)) & keep
            continue
        for c in range(min(drawn, seen), lowest - 1, -1):
            grown = ways[c]
            for d in range(1, min(size, c) + 1):
                grown += math.comb(size, d) * (ways[c - d] << (d * shift))
            ways[c] = grown & keep
    return ways[drawn]
