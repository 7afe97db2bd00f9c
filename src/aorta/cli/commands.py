"""The table of `aorta` subcommands, loaded lazily by `aorta.cli.group`."""

from __future__ import annotations

# name -> (import path of the click command, one-line help shown by `aorta --help`)
COMMANDS: dict[str, tuple[str, str]] = {
    "sweep": ("aorta.cli.sweep:sweep", "Run a command many times over a matrix, under profilers."),
    "report": ("aorta.cli.report:report",
               "Report a run: one self-contained HTML page, or Markdown/JSON."),
    "compare": ("aorta.cli.compare:compare",
                "Compare two runs: a verdict per metric and kernel, and a CI gate."),
    "export": ("aorta.cli.export:export",
               "Write a run's trial and kernel tables as CSV or Parquet."),
    "collectors": ("aorta.cli.collectors:collectors",
                   "List collectors, their options and whether each works here."),
    "doctor": ("aorta.cli.doctor:doctor", "Check what can be profiled on this machine, and how to fix the rest."),
    "env": ("aorta.cli.env:env", "Print the environment snapshot a run records."),
    "history": ("aorta.cli.history:history",
                "Record runs in a performance history; trends, detected steps, a CI gate."),
}
