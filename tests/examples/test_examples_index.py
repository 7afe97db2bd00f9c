"""Issue 14: examples/README.md indexes every example in examples/, each link resolving."""

from __future__ import annotations

import re

from examples_catalog import PAYLOADS, ROOT

INDEX = ROOT / "examples" / "README.md"


def test_every_example_directory_is_indexed_and_every_link_resolves():
    text = INDEX.read_text()
    for key in PAYLOADS:
        assert f"[`{key}`](profiling/{key}/README.md)" in text, key
    assert "[`quickstart`](quickstart/recipe.yaml)" in text
    tops = {p.name for p in (ROOT / "examples").iterdir() if p.is_dir()}
    assert tops == {"profiling", "quickstart"}, "a new example folder needs its index entry"
    for target in re.findall(r"\]\(([^)#]+)\)", text):
        assert (INDEX.parent / target).exists(), target


def test_the_index_commands_name_files_that_exist():
    text = INDEX.read_text()
    for path in re.findall(r"examples/[\w./-]+\.(?:yaml|py)", text):
        assert (ROOT / path).is_file(), path
