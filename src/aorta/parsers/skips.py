"""What a reader left out of an artifact, and why: the one fail-soft rule every parser keeps.

A reader never drops a record silently. Each record (a CSV row, a trace event, a tree leaf, a
profile entry) that it cannot read whole (a wrong field count, a value of the wrong type, a
time that is negative, NaN, infinite or text, a row cut by the end of the file) is counted
here with a short reason; the collector then publishes the capture as `partial` (some records
read, some not), `unparsed` (nothing readable) or `ok` (every record read). The rule and its
limits are written down in docs/collectors/reading.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_EXAMPLES = 3          # reasons quoted in a capture reason; the rest are only counted


@dataclass
class Skips:
    """Records left out (`count`), up to `MAX_EXAMPLES` reasons, and whether the file ended
    inside a record (`cut`: how, in words; empty when it did not)."""

    count: int = 0
    examples: list[str] = field(default_factory=list)
    cut: str = ""

    def skip(self, why: str, records: int = 1) -> None:
        """Count `records` left out for reason `why`."""
        self.count += records
        if why not in self.examples and len(self.examples) < MAX_EXAMPLES:
            self.examples.append(why)

    def cut_short(self, how: str, records: int = 1) -> None:
        """The file ends inside a record: that record is left out, and the file is cut."""
        self.cut = self.cut or how
        self.skip(how, records)

    def absorb(self, other: Skips, label: str = "") -> None:
        """Add what another reader (of another file) left out, its reasons prefixed by `label`."""
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
        plural = unit if self.count == 1 else unit + "s"
        more = self.count - len(self.examples)
        detail = "; ".join(self.examples) + (f"; {more} more" if more > 0 and self.examples
                                             else "")
        return f"{self.count} {plural} left out ({detail})" if detail else \
            f"{self.count} {plural} left out"
