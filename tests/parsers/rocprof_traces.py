"""Generated rocprofv3 kernel traces with hazards mixed in, and the obvious reading of a trace
to hold the reader to (tests/parsers/test_rocprof_trace_scan.py, test_rocprof_csv.py)."""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Sequence
from typing import Any

# The kernel trace's columns: ROCm 7 (rocprofv3) and ROCm 6.
H7 = ["Guid", "Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
      "Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
      "LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
      "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X",
      "Grid_Size_Y", "Grid_Size_Z"]
H6 = ["Kind", "Agent_Id", "Queue_Id", "Thread_Id", "Dispatch_Id", "Kernel_Id", "Kernel_Name",
      "Correlation_Id", "Start_Timestamp", "End_Timestamp", "Private_Segment_Size",
      "Group_Segment_Size", "Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z",
      "Grid_Size_X", "Grid_Size_Y", "Grid_Size_Z"]


def quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def generated_trace(rows: int, seed: int, header: list[str], eol: str = "\n", *,
                    names: Sequence[str], odd_timestamps: Sequence[str], hazard_rate: float,
                    picks: int, kinds: int, strays: Sequence[str]) -> str:
    """Rows as rocprofv3 writes them, `hazard_rate` of them drawing one of `picks` hazards,
    the first `kinds` of these (the rest change no field): another Kind, a name from `names`
    (commas, quotes, line breaks), end < start, a timestamp from `odd_timestamps`, stray
    quotes in an unquoted name, timestamps past int64; some hazardous rows are also a field
    short or long, or followed by a line from `strays`.
    `eol` "\\r" ends most rows with a bare carriage return, which ends a row for the csv
    module but not for a reader of lines split at \\n."""
    rnd = random.Random(seed)
    lines = [",".join(quoted(c) for c in header)]
    for i in range(rows):
        hazard = rnd.random() < hazard_rate
        start = 10**15 + 1000 * i + rnd.randrange(100)
        fields = {c: str(rnd.randrange(300)) for c in header}
        fields.update(Guid=quoted("0000-guid"), Kind=quoted("KERNEL_DISPATCH"),
                      Kernel_Name=quoted(rnd.choice(names[:4])), Correlation_Id=str(i * 13),
                      Start_Timestamp=str(start), End_Timestamp=str(start + rnd.randrange(9**5)))
        if "Guid" in header:
            fields["Agent_Id"] = quoted("Agent 4")
        if hazard:
            pick = rnd.randrange(picks)
            pick = pick if pick < kinds else -1
            if pick == 0:
                fields["Kind"] = quoted(rnd.choice(["MEMORY_COPY", "", "kernel_dispatch"]))
            elif pick == 1:
                fields["Kernel_Name"] = quoted(rnd.choice(names))
            elif pick == 2:
                fields["End_Timestamp"] = str(start - rnd.randrange(1, 9))
            elif pick in (3, 4):
                fields[rnd.choice(["Start_Timestamp", "End_Timestamp"])] = \
                    rnd.choice(odd_timestamps)
            elif pick == 5:
                fields["Kernel_Name"] = rnd.choice(['"open', 'x"y', '"a"b', '"a" ', '""""'])
            elif pick == 6:
                fields["End_Timestamp"] = str(10**30 + rnd.randrange(10))
                fields["Start_Timestamp"] = rnd.choice([str(start), str(10**29)])
        row = [fields[c] for c in header]
        if hazard and rnd.random() < 0.1:
            row = row[:-1] if rnd.random() < 0.5 else row + ["7"]
        lines.append(",".join(row))
        if hazard and rnd.random() < 0.05:
            lines.append(rnd.choice(strays))
    if eol == "\r":
        return "".join(line + ("\n" if i % 7 == 0 else "\r") for i, line in enumerate(lines))
    return eol.join(lines) + eol


def obvious_reading(data: bytes) -> tuple[dict[str, Any], list[tuple[bytes, int, int, int]]]:
    """A kernel trace read the obvious way, the whole file at once, by the rules
    rocprof_trace_scan states: the report's counts (rows, used, filtered, skipped, cut) and
    every kernel (raw name, total ns, launches, longest ns) in the order of its first launch.
    Lines end at \\n, \\r\\n or a bare \\r; a last line without \\n is a cut row; a row
    holding a NUL is left out (each NUL is swapped for a character latin-1 text never holds,
    since Python 3.10's csv module refuses a NUL where 3.11's reads it)."""
    header, _, body = data.partition(b"\n")
    names = next(csv.reader([header.decode("utf-8", "replace").lstrip("\ufeff").strip("\r")]))
    index = {n.strip().lower(): i for i, n in enumerate(names)}
    kind, name = index.get("kind"), index["kernel_name"]
    start, end = index["start_timestamp"], index["end_timestamp"]
    whole = body[:body.rfind(b"\n") + 1]
    counts: dict[str, Any] = {"rows": 0, "used": 0, "filtered": 0, "skipped": 0,
                              "cut": bool(body[len(whole):].strip())}
    counts["rows"] = counts["skipped"] = int(counts["cut"])
    text = whole.decode("latin-1").replace("\0", "\u0100")
    totals: dict[str, list[int]] = {}
    reader = csv.reader(io.StringIO(text, newline=""))
    while True:
        try:
            row = next(reader)
        except StopIteration:
            break
        except csv.Error:
            counts["rows"] += 1
            counts["skipped"] += 1
            continue
        if not row:
            continue
        counts["rows"] += 1
        if len(row) != len(names) or "\u0100" in "".join(row):
            counts["skipped"] += 1
        elif kind is not None and row[kind] != "KERNEL_DISPATCH":
            counts["filtered"] += 1
        elif (ns := _duration(row[start], row[end])) is None or not row[name]:
            counts["skipped"] += 1
        else:
            entry = totals.setdefault(row[name], [0, 0, 0])
            entry[:] = [entry[0] + ns, entry[1] + 1, max(entry[2], ns)]
            counts["used"] += 1
    return counts, [(k.encode("latin-1"), *v) for k, v in totals.items()]  # type: ignore[misc]


def _duration(start: str, end: str) -> int | None:
    start, end = start.strip(), end.strip()
    if not all(t.isascii() and t.isdigit() for t in (start, end)):
        return None
    try:
        first, last = int(start), int(end)
    except ValueError:           # more digits than int() reads
        return None
    return last - first if last >= first else None
