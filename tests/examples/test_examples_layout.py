"""The examples tree and its READMEs: three files per example, every example and category
indexed, each README complete and runnable as written, no host specifics, shared sources equal."""

from __future__ import annotations

import re

import pytest

from examples_catalog import (AMD_ONLY, CATEGORIES, EXAMPLES, INDEX, PAYLOADS, PROFILING,
                              SAME_SOURCE, SEED_COMMANDS, Example, aorta_command, commands,
                              section)

README_SECTIONS = ("## Requirements", "## Run it standalone", "## Run it under aorta",
                   "## What to expect", "## Provenance", "## Verified")
HOST_PATH = re.compile(r"(?<![\w.])/(home|Users|apps|work|root|scratch|mnt|nfs)/")


def test_the_tree_holds_exactly_the_listed_examples():
    found = {f"{p.parent.name}/{p.name}" for p in PROFILING.glob("*/*") if p.is_dir()}
    assert found == set(PAYLOADS)
    assert {p.name for p in PROFILING.iterdir() if p.is_dir()} == set(CATEGORIES)


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_each_example_is_three_files(example: Example):
    files = sorted(p.name for p in example.directory.iterdir() if p.name != "__pycache__")
    assert files == sorted([example.payload.name, "recipe.yaml", "README.md"])


def test_every_category_is_a_collector():
    from aorta.collectors.registry import names

    assert set(CATEGORIES) <= set(names())


def test_the_index_lists_every_example_and_category():
    text = INDEX.read_text()
    for example in EXAMPLES:
        assert f"[`{example.key}`]({example.key}/README.md)" in text, example.key
    categories = section(text, "## Categories")
    for category in CATEGORIES:
        assert f"| `{category}/` | `{category}`" in categories, category


def test_the_index_table_has_a_truthful_verified_column():
    table = section(INDEX.read_text(), "## The examples")
    header = next(line for line in table.splitlines() if line.startswith("| Example"))
    columns = [c.strip() for c in header.strip("|").split("|")]
    verified = columns.index("Verified on")
    for example in EXAMPLES:
        row = next(line for line in table.splitlines() if line.startswith(f"| [`{example.key}`]"))
        cell = [c.strip() for c in row.strip("|").split("|")][verified]
        if example.key in AMD_ONLY:
            assert cell == "unverified here: no AMD GPU", example.key
        else:
            assert cell, example.key


def test_the_index_table_runs_each_readmes_command():
    table = section(INDEX.read_text(), "## The examples")
    for example in EXAMPLES:
        row = next(line for line in table.splitlines() if line.startswith(f"| [`{example.key}`]"))
        assert f"`{aorta_command(example)}`" in row, example.key


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_readme_has_every_section_in_order(example: Example):
    text = example.readme.read_text()
    positions = [text.find(heading + "\n") for heading in README_SECTIONS]
    missing = [h for h, p in zip(README_SECTIONS, positions, strict=True) if p < 0]
    assert not missing, missing
    assert positions == sorted(positions)
    assert re.search(r"^Verified: \S", text, re.MULTILINE), "no 'Verified: ...' line"
    assert f"`{example.category}" in text or f"`{example.category}`" in text


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_readme_shows_the_bare_command_before_the_aorta_one(example: Example):
    text = example.readme.read_text()
    bare = commands(section(text, "## Run it standalone"))
    assert bare and not any(c.startswith("aorta") for c in bare)
    payload = f"examples/profiling/{example.key}/{example.payload.name}"
    assert any(payload in c for c in bare), f"the standalone commands never name {payload}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_readme_aorta_command_names_this_recipe_and_payload(example: Example):
    command = aorta_command(example)
    assert f"--recipe examples/profiling/{example.key}/recipe.yaml " in command
    assert " --output ./profiling_results -- " in command
    target = command.split(" -- ", 1)[1].split()
    if example.payload.suffix == ".py":
        assert target[:2] == ["python", f"examples/profiling/{example.key}/{example.payload.name}"]
    else:   # a native binary built by the standalone section's compiler command
        bare = " ".join(commands(section(example.readme.read_text(), "## Run it standalone")))
        assert f"-o {target[0]} " in bare, f"{target[0]} is not built in the standalone section"


@pytest.mark.parametrize("key", sorted(SEED_COMMANDS))
def test_seed_examples_keep_the_seed_command(key: str):
    assert aorta_command(Example(key)) == SEED_COMMANDS[key]


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_readme_states_a_verification_truthfully(example: Example):
    line = next(text for text in example.readme.read_text().splitlines()
                if text.startswith("Verified: "))
    if example.key in AMD_ONLY:
        assert line.startswith("Verified: unverified here: no AMD GPU")
    else:
        assert not line.startswith("Verified: unverified here: no AMD GPU")


def test_no_file_names_a_host_path():
    offenders = []
    for path in sorted(PROFILING.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if HOST_PATH.search(line):
                    offenders.append(f"{path.relative_to(PROFILING)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("group", SAME_SOURCE, ids=lambda g: g[0])
def test_shared_sources_stay_identical(group: tuple[str, ...]):
    first = (PROFILING / group[0]).read_bytes()
    for other in group[1:]:
        assert (PROFILING / other).read_bytes() == first, f"{other} drifted from {group[0]}"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.key)
def test_readme_names_its_ticket_directory(example: Example):
    ticket = f"PROFILING-{example.category}-{example.directory.name}"
    assert f"profiling_results/{ticket}/" in example.readme.read_text()
