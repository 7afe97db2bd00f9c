"""Quantiles of num / den for two independent discrete laws, without listing every outcome.

The outcomes form a grid: a row per denominator value d holding num_k / d for every sorted
numerator value num_k (ascending rows for d > 0, descending for d < 0). P(num / den <= r) takes
one binary search per row (num_k <= r d for d > 0, num_k >= r d for d < 0), run in C through
`map`; the same searches count the outcomes between two cuts. A zero denominator gives the
fixed outcomes -inf, 1.0 (0 / 0) and +inf. Cuts close in on a quantile (`Grid._narrow`), by a
normal model of log(num / den) when both laws are positive (`Grid._model`), else, or when that
stalls on a lumpy law, at the rows' median (`Grid._row_median`); once about one outcome per row
is left, those are listed, sorted and accumulated. 2 to 5 cuts per quantile (bench_interval).
"""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from operator import itemgetter, mul
from statistics import NormalDist
from typing import NamedTuple

from aorta.stats.median_law import MedianLaw

_LIST_AT = 64          # list the bracket once it holds this many outcomes plus one per row
_MAX_ROUNDS = 64
_SMALL = 256           # grids of up to this many outcomes are listed whole
_NORMAL = NormalDist()

# (ratio, probability, numerator, denominator) of one outcome
_Item = tuple[float, float, float, float]


class Cut(NamedTuple):
    """Where r cuts the grid: `mass` = P(num / den <= r); per row, the index of the first
    numerator value past r (bisect_right for d > 0, bisect_left for d < 0); `order`, the
    positive rows' indices summed less the negative rows', rising by one per outcome passed."""

    r: float
    mass: float
    pos: list[int]
    neg: list[int]
    order: int


class _Search(NamedTuple):
    """One quantile being sought: P(<= r) must exceed p (strict) or reach it; the model's
    guess for log r and its slope d(log r)/dz, when the laws are positive."""

    p: float
    strict: bool
    guess: float | None
    slope: float

    def crossed(self, mass: float) -> bool:
        return mass > self.p if self.strict else mass >= self.p


@dataclass(frozen=True)
class Grid:
    num: MedianLaw
    den: MedianLaw
    pos: tuple[float, ...]                   # denominator values > 0, and their probabilities
    pos_w: tuple[float, ...]
    neg: tuple[float, ...]                   # denominator values < 0
    neg_w: tuple[float, ...]
    fixed: tuple[tuple[float, float, float], ...]   # den 0: (ratio, probability, numerator)

    @classmethod
    def of(cls, num: MedianLaw, den: MedianLaw) -> Grid:
        pos = [(d, w) for d, w in zip(den.values, den.probs) if d > 0]
        neg = [(d, w) for d, w in zip(den.values, den.probs) if d < 0]
        return cls(num, den, tuple(d for d, _ in pos), tuple(w for _, w in pos),
                   tuple(d for d, _ in neg), tuple(w for _, w in neg),
                   _fixed(num, den.at_most(0.0) - den.below(0.0)))

    def cut(self, r: float, lo: Cut | None = None, hi: Cut | None = None) -> Cut:
        """The cut at r; `lo` and `hi`, cuts at or below and at or above r, narrow it."""
        num = self.num.values
        if r > 0 and not self.neg and len(num) <= 2 * len(self.pos) and lo and hi:
            return self._merged(r, lo, hi)
        pos = list(map(partial(bisect_right, num), map(r.__mul__, self.pos)))
        neg = list(map(partial(bisect_left, num), map(r.__mul__, self.neg)))
        cum = self.num.cumulative.__getitem__
        mass = sum(map(mul, self.pos_w, map(cum, pos)))
        if self.neg:
            mass += sum(self.neg_w) - sum(map(mul, self.neg_w, map(cum, neg)))
        if self.fixed:
            mass += sum(w for at, w, _ in self.fixed if at <= r)
        return Cut(r, mass, pos, neg, sum(pos) - sum(neg))

    def _merged(self, r: float, lo: Cut, hi: Cut) -> Cut:
        """`cut` for ascending positive rows as a merge (each row's index starts where the last
        stopped): cheaper in Python than a search per row while num has a few values per row."""
        num, cum = self.num.values, self.num.cumulative
        indices, mass, j = [], 0.0, 0
        for d, w, a, b in zip(self.pos, self.pos_w, lo.pos, hi.pos):
            t = r * d
            if j < a:
                j = a
            while j < b and num[j] <= t:
                j += 1
            mass += w * cum[j]
            indices.append(j)
        if self.fixed:
            mass += sum(w for at, w, _ in self.fixed if at <= r)
        return Cut(r, mass, indices, [], sum(indices))

    def quantiles(self, *wanted: tuple[float, bool]) -> list[tuple[float, float]]:
        """Per (p, strict): (numerator, denominator) of the smallest outcome r with
        P(num / den <= r) > p (strict) or >= p, else of the largest; -inf is (-1.0, 0.0)."""
        lo, hi = self._ends()
        if len(self.num.values) * len(self.den.values) <= _SMALL:
            items = self._items(lo, hi)
            return [_walk(items, lo.mass, _Search(p, strict, None, 0.0)) for p, strict in wanted]
        out = []
        for p, strict in wanted:
            search = _Search(p, strict, *self._model(p))
            if search.crossed(lo.mass):
                out.append((-1.0, 0.0))
            else:
                low, high = self._narrow(lo, hi, search)
                out.append(_walk(self._items(low, high), low.mass, search))
        return out

    def _ends(self) -> tuple[Cut, Cut]:
        k = len(self.num.values)
        low = Cut(-math.inf, sum(w for at, w, _ in self.fixed if at == -math.inf),
                  [0] * len(self.pos), [k] * len(self.neg), -k * len(self.neg))
        high = Cut(math.inf, sum(self.pos_w) + sum(self.neg_w) + sum(w for _, w, _ in self.fixed),
                   [k] * len(self.pos), [0] * len(self.neg), k * len(self.pos))
        return low, high

    def _between(self, lo: Cut, hi: Cut) -> int:
        """How many outcomes lie in (lo.r, hi.r]."""
        fixed = sum(1 for at, _, _ in self.fixed if lo.r < at <= hi.r)
        return hi.order - lo.order + fixed

    def _model(self, p: float) -> tuple[float | None, float]:
        """(guess of log r, d(log r)/dz), or (None, 0) unless both laws are positive: the medians'
        log difference, plus both laws' tail distances combined as normal ones, sqrt(a^2 + b^2)."""
        if not (self.num.values[0] > 0 and self.den.values[0] > 0):
            return None, 0.0
        z = _z(p)
        mid = _log_quantile(self.num, 0.5) - _log_quantile(self.den, 0.5)
        num_tail = _log_quantile(self.num, p) - _log_quantile(self.num, 0.5)
        den_tail = _log_quantile(self.den, 0.5) - _log_quantile(self.den, 1 - p)
        reach = math.copysign(math.hypot(num_tail, den_tail), z)
        return mid + reach, max(abs(reach / z) if z else 0.0, 1e-9)

    def _narrow(self, lo: Cut, hi: Cut, search: _Search) -> tuple[Cut, Cut]:
        """Cut until the bracket holds at most one outcome per row plus `_LIST_AT`."""
        limit = _LIST_AT + len(self.pos) + len(self.neg)
        count, span, reach, sure = self._between(lo, hi), hi.mass - lo.mass, 1.0, False
        for _ in range(_MAX_ROUNDS):
            if count <= limit:
                break
            was_open = _open(lo, hi)
            try:
                aim = _aim(lo, hi, search.p, count, limit)
                r = None if sure else _model_step(lo, hi, search, aim, reach)
            except OverflowError:    # a step off the floats (laws spanning 1e-300 to 1e300)
                r = None
            if r is None or not lo.r < r < hi.r:
                r = self._row_median(lo, hi)
            middle = self.cut(r, lo, hi)
            lo, hi = (lo, middle) if search.crossed(middle.mass) else (middle, hi)
            left, still_open = self._between(lo, hi), _open(lo, hi)
            # A Newton step that left the same end open goes twice as far next; an aimed cut that
            # halves neither outcomes nor mass has stalled (a lumpy law): a sure step follows.
            reach = reach * 2 if was_open == still_open == 1 else 1.0
            sure = not (still_open or left <= count // 2 or hi.mass - lo.mass <= span / 2)
            count, span = left, hi.mass - lo.mass
        return lo, hi

    def _row_median(self, lo: Cut, hi: Cut) -> float:
        """The count-weighted median of every row's middle outcome inside the bracket: at
        least a quarter of the bracket lies on each side of it."""
        num = self.num.values
        middles = [(num[(a + b) // 2] / d, b - a)
                   for d, a, b in zip(self.pos, lo.pos, hi.pos) if b > a]
        middles += [(num[(a + b) // 2] / d, b - a)
                    for d, a, b in zip(self.neg, hi.neg, lo.neg) if b > a]
        middles.sort()
        half, seen = sum(c for _, c in middles) / 2, 0
        for value, c in middles:
            seen += c
            if seen >= half:
                return value
        return hi.r

    def _items(self, lo: Cut, hi: Cut) -> list[_Item]:
        """Every outcome in (lo.r, hi.r]."""
        num, prob = self.num.values, self.num.probs
        items = [(num[k] / d, w * prob[k], num[k], d)
                 for d, w, a, b in zip(self.pos, self.pos_w, lo.pos, hi.pos) if b > a
                 for k in range(a, b)]
        items += [(num[k] / d, w * prob[k], num[k], d)
                  for d, w, a, b in zip(self.neg, self.neg_w, hi.neg, lo.neg) if b > a
                  for k in range(a, b)]
        items += [(at, w, n, 0.0) for at, w, n in self.fixed if lo.r < at <= hi.r]
        return items


def _walk(items: list[_Item], running: float, search: _Search) -> tuple[float, float]:
    """Accumulate the outcomes in ratio order from mass `running`: the (numerator,
    denominator) of the first that crosses, else of the last."""
    if not items:
        return 1.0, 1.0
    items.sort()
    masses = list(accumulate(map(itemgetter(1), items), initial=running))
    first = (bisect_right if search.strict else bisect_left)(masses, search.p, 1)
    _, _, n, d = items[min(first, len(items)) - 1]
    return n, d


def _model_step(lo: Cut, hi: Cut, search: _Search, aim: float, reach: float) -> float | None:
    """The model's guess while nothing is cut; from one positive, finite end, a Newton step on
    the model's slope (`reach` times long); between two, regula falsi on the normal scale aimed
    at mass `aim`. None without a model or a slope: the caller cuts at the rows' median."""
    if search.guess is None:
        return None
    z, slope = _z(aim), search.slope
    low_open, high_open = not lo.r > 0, not math.isfinite(hi.r)
    if low_open and high_open:
        return math.exp(search.guess)
    if low_open:
        return hi.r * math.exp(-slope * reach * (_z(hi.mass) - z + 0.05))
    if high_open:
        return lo.r * math.exp(slope * reach * (z - _z(lo.mass) + 0.05))
    z_lo, z_hi = _z(lo.mass), _z(hi.mass)
    if z_hi <= z_lo:
        return None
    share = min(max((z - z_lo) / (z_hi - z_lo), 0.01), 0.99)
    return math.exp(math.log(lo.r) + share * (math.log(hi.r) - math.log(lo.r)))


def _aim(lo: Cut, hi: Cut, p: float, count: int, limit: int) -> float:
    """The mass to cut at next: p while the bracket is open; then past p toward the farther end
    by half the mass holding `limit` outcomes at the bracket's density: two good cuts close it."""
    if _open(lo, hi) or count <= 0:
        return p
    half = (hi.mass - lo.mass) * limit / count / 2
    return p + half if hi.mass - p > p - lo.mass else p - half


def _open(lo: Cut, hi: Cut) -> int:
    """How many ends of a bracket are not yet positive and finite (0, 1 or 2)."""
    return (not lo.r > 0) + (not math.isfinite(hi.r))


def _fixed(num: MedianLaw, zero: float) -> tuple[tuple[float, float, float], ...]:
    """The outcomes of a zero denominator (probability `zero`): -inf, 1.0 (0 / 0), +inf."""
    if zero <= 0:
        return ()
    below, at_most = num.below(0.0), num.at_most(0.0)
    parts = ((-math.inf, below, -1.0), (1.0, at_most - below, 0.0), (math.inf, 1 - at_most, 1.0))
    return tuple((at, zero * w, n) for at, w, n in parts if w > 0)


def _z(mass: float) -> float:
    return _NORMAL.inv_cdf(min(max(mass, 1e-12), 1 - 1e-12))


def _log_quantile(law: MedianLaw, p: float) -> float:
    """log of the law's p-quantile (the smallest value with P(<= value) >= p)."""
    return math.log(law.values[min(bisect_left(law.cumulative, p), len(law.values)) - 1])
