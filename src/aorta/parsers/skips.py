"""What a reader left out of an artifact, and why: a record that cannot be read whole is counted
here, never dropped silently (the fail-soft rule every parser keeps: docs/collectors/reading.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

MAX_EXAMPLES = 3          # reasons quoted in a capture reason; the rest are only counted
# A CSV row holding a NUL byte is a damaged row, left out and counted, on every Python: 3.10's
# csv module refuses a NUL (csv.Error) and 3.11's reads it, so readers hand it `nul_marked` lines.
NUL_MARK = "\udc00"            # stands for a NUL: a lone surrogate, which no decoded text holds
NUL_ROW = "a NUL byte (a malformed row)"


def nul_marked(lines: Iterable[str]) -> Iterator[str]:
    for line in lines:
        yield line.replace("\0", NUL_MARK) if "\0" in line else line


@dataclass
class Skips:
    """Records left out (`count`), up to `MAX_EXAMPLES` reasons, and whether the file ended
    inside a record (`cut`: how, in words; empty when it did not)."""

    count: int = 0
    examples: list[str] = field(default_factory=list)
    cut: str = ""

    def skip(self, why: str, records: int = 1) -> None:
        self.count += records
        if why not in self.examples and len(self.examples) < MAX_EXAMPLES:
            self.examples.append(why)

    def cut_short(self, how: str, records: int = 1) -> None:
        """The file ends inside a record: that record is left out, and the file is cut."""
        self.cut = self.cut or how
        self.skip(how, records)

    def absorb(self, other: Skips, label: str = "") -> None:
        """Add what the reader of another file left out, its reasons prefixed by `label`."""
        prefix = f"{label}: " if label else ""
        for why in other.examples:
            self.skip(prefix + why, 0)
        self.count += other.count
        self.cut = self.cut or (prefix + other.cut if other.cut else "")

    def __bool__(self) -> bool:
        return self.count > 0

    def describe(self, unit: str = "record") -> str:
        """`'2 rows left out (row 7: TotalDurationNs is 'abc'; ...)'`; '' when none were."""
        if not self.count:
            return ""
        more = self.count - len(self.examples)
        detail = "; ".join(self.examples + ([f"{more} more"] if more > 0 and self.examples else []))
        plural = unit if self.count == 1 else unit + "s"
        return f"{self.count} {plural} left out" + (f" ({detail})" if detail else "")


@dataclass
class Shares:
    """A percentage column summed over the rows read (None: no such column, or a share that
    cannot be read). A whole table's adds up to 100, so less means rows are missing: a file
    cut at a line break reads like a whole one otherwise."""

    total: float | None = 0.0

    def add(self, share: float | None) -> None:
        if self.total is not None:
            self.total = self.total + share if share is not None and share >= 0 else None

    def check(self, skips: Skips, rows: int, rounding: float, column: str) -> None:
        """Count a missing row when the `rows` rows read (none left out) add up to less than
        100 by more than the tool's `rounding` a row can explain."""
        if self.total is None or skips or not rows:
            return
        if self.total < 100 - (rounding * rows + 0.01):
            skips.skip(f"the {column} column adds up to {self.total:.4g} over the rows read, "
                       f"not 100: at least one row is missing (cut at a line break?)")


def short(value: Any) -> str:
    """`repr(value)`, cut to 40 characters, for a reason."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def kind(value: Any, none: str = "null") -> str:
    """A value of the wrong type, in words: `a str ('abc')`; `none` for None."""
    return none if value is None else f"a {type(value).__name__} ({short(value)})"
