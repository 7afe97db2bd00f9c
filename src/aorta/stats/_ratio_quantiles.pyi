from collections.abc import Sequence

def quantiles(num_values: Sequence[float], num_probs: Sequence[float],
              num_cumulative: Sequence[float], den_values: Sequence[float],
              den_probs: Sequence[float],
              wanted: Sequence[tuple[float, bool]]) -> list[tuple[float, float]] | None: ...
