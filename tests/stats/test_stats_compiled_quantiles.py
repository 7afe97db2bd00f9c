"""The compiled quantile search gives the Python search's outcome, exactly, on every grid."""

from __future__ import annotations

import math
import random

import pytest

from aorta.stats import interval
from aorta.stats.median_law import law_of
from aorta.stats.ratio_grid import Grid

compiled = interval._compiled_quantiles

pytestmark = pytest.mark.skipif(compiled is None, reason="built without a C compiler "
                                "(tests/test_compiled_kernels_built.py holds CI to building it)")


def _sample(rng: random.Random, n: int, shape: str, scale: float) -> list[float]:
    if shape == "tied":                     # a coarse timer: many ties
        return [round(rng.lognormvariate(0, 0.05) * scale, 1) for _ in range(n)]
    if shape == "lumpy":                    # three values only
        return [float(rng.choice([1, 2, 3])) for _ in range(n)]
    if shape == "signed":
        return [rng.gauss(0, 1) for _ in range(n)]
    if shape == "outlier":
        return [scale * (20.0 if rng.random() < 0.1 else rng.lognormvariate(0, 0.02))
                for _ in range(n)]
    return [rng.lognormvariate(0, rng.choice([0.005, 0.05, 0.3])) * scale for _ in range(n)]


SIZES = [1, 2, 3, 4, 5, 8, 9, 10, 11, 16, 20, 21, 30, 50, 51]


@pytest.mark.parametrize("shape", ["smooth", "tied", "lumpy", "outlier", "signed"])
def test_same_outcome_as_the_python_search(shape: str) -> None:
    rng = random.Random(f"compiled-{shape}")
    checked = 0
    for _ in range(400):
        num = law_of(_sample(rng, rng.choice(SIZES), shape, 110.0))
        # Signed numerators over mostly positive denominators: cuts at negative r too.
        den_shape = "smooth" if shape == "signed" and rng.random() < 0.8 else shape
        den = law_of(_sample(rng, rng.choice(SIZES), den_shape, 100.0))
        for level in (0.8, 0.95, 0.99):
            tail = (1 - level) / 2
            wanted = ((tail - 1e-12, True), (1 - tail + 1e-12, False), (0.5, True))
            found = compiled(num.values, num.probs, num.cumulative, den.values, den.probs,
                             wanted)
            if found is None:               # declined: a denominator at or below zero
                assert den.values[0] <= 0
                continue
            assert found == Grid.of(num, den).quantiles(*wanted)
            checked += 1
    assert checked >= 300


def test_large_samples_agree() -> None:
    rng = random.Random(3)
    for n_num, n_den in ((200, 201), (201, 200), (400, 400)):
        num = law_of([rng.lognormvariate(0.1, 0.05) for _ in range(n_num)])
        den = law_of([rng.lognormvariate(0.0, 0.05) for _ in range(n_den)])
        wanted = ((0.025 - 1e-12, True), (0.975 + 1e-12, False))
        assert compiled(num.values, num.probs, num.cumulative, den.values, den.probs,
                        wanted) == Grid.of(num, den).quantiles(*wanted)


def test_declines_what_it_does_not_handle() -> None:
    law = law_of([1.0, 2.0, 3.0])
    for den in (law_of([0.0, 1.0, 2.0]), law_of([-1.0, 1.0, 2.0])):
        assert compiled(law.values, law.probs, law.cumulative, den.values, den.probs,
                        ((0.5, True),)) is None
    assert compiled((1.0, math.nan), (0.5, 0.5), (0.0, 0.5, 1.0), (1.0,), (1.0,),
                    ((0.5, True),)) is None


def test_zero_and_negative_denominators_still_answer_through_python() -> None:
    assert interval.ratio_interval([0.0, 0.0, 1.0], [1.0, 2.0, 3.0], 0.9)[1] == math.inf
    low, high = interval.ratio_interval([-2.0, -1.0, 1.0], [1.0, 2.0, 3.0], 0.9)
    assert low <= high


def test_bad_arguments_raise_instead_of_crashing() -> None:
    with pytest.raises(ValueError):
        compiled((1.0,), (1.0,), (0.0,), (1.0,), (1.0,), ((0.5, True),))
    with pytest.raises(TypeError):
        compiled((1.0,), (1.0,), (0.0, 1.0), (1.0,), (1.0,), ((0.5,),))
    with pytest.raises(TypeError):
        compiled(("x",), (1.0,), (0.0, 1.0), (1.0,), (1.0,), ())
    with pytest.raises(ValueError):
        compiled((), (), (0.0,), (1.0,), (1.0,), ())


def test_a_list_changed_by_float_conversion_is_read_safely() -> None:
    """Regression: an item's __float__ emptying the list being read (values or wanted) made the
    C read freed items and past the list's end."""
    values: list[object] = [1.0, 2.0, 3.0]

    class Shrinks:
        def __float__(self) -> float:
            values.clear()
            return 1.5
    values[1] = Shrinks()
    assert compiled(values, (0.3, 0.3, 0.4), (0.0, 0.3, 0.6, 1.0), (1.0,), (1.0,),
                    ((0.5, True),)) == [(1.5, 1.0)]
    wanted: list[object] = [(0.5, True), (0.6, True), (0.7, True)]

    class Empties:
        def __float__(self) -> float:
            wanted.clear()
            return 0.5
    wanted[0] = (Empties(), True)
    assert compiled((1.0, 2.0), (0.5, 0.5), (0.0, 0.5, 1.0), (1.0,), (1.0,), wanted) == \
        [(2.0, 1.0)] * 3


def test_wanted_pairs_may_be_lists_as_in_the_python_search() -> None:
    """Regression: a list pair raised SystemError ("new style getargs format")."""
    law = law_of([1.0, 2.0, 3.0])
    wanted = [[0.5, True], (0.9, 0)]
    assert compiled(list(law.values), list(law.probs), list(law.cumulative), law.values,
                    law.probs, wanted) == Grid.of(law, law).quantiles(*wanted)  # type: ignore
    with pytest.raises(TypeError):
        compiled(law.values, law.probs, law.cumulative, law.values, law.probs, (0.5,))
