"""Numbers and units as NVIDIA's profilers print them, scaled to base units.

Nsight Compute prints `1,980,000` or `6.080000` beside a unit (`us`, `usecond`, `Mbyte`,
`Gbyte/second`, `cycle/nsecond`, `%`); Nsight Systems puts it in a header (`Total Time (ns)`).
Byte and count prefixes are SI (factor 1000), as the Nsight Compute CLI manual says. Base units:
time in ns, sizes in bytes, rates per second; percentages and unitless values as printed.
"""

from __future__ import annotations

import math
import re

TIME_BASE = "ns"

# unit as printed -> nanoseconds per unit: ns, nsec, nsecond, nseconds, us, ..., seconds
_TIME_NS = {prefix + word: factor
            for prefix, factor in (("n", 1.0), ("u", 1e3), ("m", 1e6), ("", 1e9))
            for word in ("s", "sec", "second", "seconds")} | {"\u00b5s": 1e3, "\u03bcs": 1e3}
_PREFIX = {"K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# Words Nsight Compute scales with an SI prefix ("Kbyte", "Minst", "Gcycle").
_SCALED_WORDS = frozenset({"byte", "inst", "cycle", "warp", "sector", "request", "thread", "block",
                           "flop", "wavefront", "transaction", "hz", "Hz"})

_PLAIN = re.compile(r"^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$")
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?$")


def parse_number(text: str) -> float | None:
    """`'1,024'` -> 1024.0, `'6.080000'` -> 6.08, `'1e3'` -> 1000.0; None for anything that
    is not one finite number: empty cells, `n/a`, `nan`, `inf`, values that overflow a float,
    instanced lists (`240; 240`), tuples (`(256, 1, 1)`)."""
    s = text.strip()
    if _THOUSANDS.match(s):
        s = s.replace(",", "")
    elif not _PLAIN.match(s):
        return None
    value = float(s)
    return value if math.isfinite(value) else None


def to_base(value: float, unit: str) -> tuple[float, str]:
    """`value` printed in `unit`, scaled to base units -> (value, base unit). A unit this
    table does not know is kept as printed, with the value unchanged, so the pair still says
    truthfully what the number is."""
    unit = unit.strip()
    numerator, slash, denominator = unit.partition("/")
    if (top := _scale(numerator)) is None:
        return value, unit
    factor, base = top
    if not slash:
        return _tidy(value * factor), base
    if (bottom := _scale(denominator)) is None:
        return value, unit
    per, per_base = bottom
    if per_base == TIME_BASE:      # a rate: express it per second
        return _tidy(value * factor * 1e9 / per), f"{base}/second"
    return _tidy(value * factor / per), f"{base}/{per_base}"


def _tidy(value: float) -> float:
    # Decimal scaling in binary floats leaves noise (8.19 * 1e3 = 8189.999999999999); the tools
    # print at most ~7 significant digits, so 12 keep every digit they gave and drop the noise.
    return float(f"{value:.12g}")


def _scale(word: str) -> tuple[float, str] | None:
    """`'usecond'` -> (1e3, 'ns'); `'Mbyte'` -> (1e6, 'byte'); `'%'` -> (1, '%');
    None for a word with a prefix on something unknown (`'Kfoo'` is not guessed at)."""
    if word in _TIME_NS:
        return _TIME_NS[word], TIME_BASE
    if word in _SCALED_WORDS or word in ("", "%"):
        return 1.0, word
    if len(word) > 1 and word[0] in _PREFIX and word[1:] in _SCALED_WORDS:
        return _PREFIX[word[0]], word[1:]
    if word.isalpha() and word.islower():
        return 1.0, word           # an unscaled unit we have no table for: keep it as is
    return None
