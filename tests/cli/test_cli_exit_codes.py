"""Issue 25: every place that lists exit codes says the same complete thing: the group's help,
each command's help (the codes it can end with) and the README's table, in one set of words
(`aorta.base.errors.EXIT_MEANINGS`)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from aorta.base.errors import EXIT_MEANINGS
from aorta_testing import run_aorta

README = Path(__file__).resolve().parents[2] / "README.md"
ANY = ("0", "1", "2", "128 + n")


def _words(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def test_the_readme_table_is_the_codes_words():
    section = README.read_text().split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = dict(re.findall(r"^\| ([^|]+?) \| (.+) \|$", section, re.MULTILINE)[1:])
    assert {code: _words(why) for code, why in rows.items()} == EXIT_MEANINGS
    assert "no trial passed" in EXIT_MEANINGS["3"]


@pytest.mark.parametrize("command, codes", [
    ((), (*ANY, "3", "4")),
    (("sweep",), (*ANY, "3")),
    (("sweep", "run"), (*ANY, "3")),
    (("sweep", "status"), ANY),
    (("report",), ANY),
    (("compare",), (*ANY, "4")),
    (("export",), ANY),
    (("collectors",), ANY),
    (("doctor",), ANY),
    (("env",), ANY),
    (("history", "add"), ANY),
    (("history", "show"), (*ANY, "4")),
    (("history", "report"), (*ANY, "4")),
])
def test_every_help_lists_its_codes_in_the_same_words(command, codes):
    proc = run_aorta(*command, "--help")
    assert proc.returncode == 0, proc.stderr
    listed = _words(proc.stdout.split("Exit codes:", 1)[1])
    expected = " ".join(f"{code} {EXIT_MEANINGS[code]}" for code in EXIT_MEANINGS
                        if code in codes)
    assert listed == expected
