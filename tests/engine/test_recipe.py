"""The recipe schema: every bad recipe gets one line naming file, key path, value, fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from aorta.base.errors import RecipeError
from aorta.recipe.schema import BUNDLES, load_recipe, recipe_from_mapping

BAD = [
    ({"schema_version": 1, "trials": 0}, "r.yaml: trials: Input should be greater than or equal to 1, got 0"),
    ({"schema_version": 1, "trails": 3}, "r.yaml: trails: unknown key; allowed: axes, baseline, collect, command"),
    ({"schema_version": 2}, "r.yaml: schema_version: this aorta reads schema_version 1"),
    ({"trials": 2}, "r.yaml: schema_version: required key is missing (add 'schema_version: 1')"),
    ({"schema_version": 1, "mode": "triage"}, "r.yaml: mode: only mode 'probe'"),
    ({"schema_version": 1, "env": {"1BAD": "x"}}, "r.yaml: env: '1BAD' is not a valid environment variable name"),
    ({"schema_version": 1, "env": {"FLAG": True}}, "r.yaml: env: the value of FLAG must be a string (quote it in YAML)"),
    ({"schema_version": 1, "collect": "rocprof"}, "r.yaml: collect: must be a list of collector names or a mapping"),
    ({"schema_version": 1, "collect": [1]}, "r.yaml: collect: a list of collector names must hold only strings"),
    ({"schema_version": 1, "timeout_per_trial": 0}, "r.yaml: timeout_per_trial: Input should be greater than 0, got 0"),
    ({"schema_version": 1, "env_passthrough_mode": "files"}, "r.yaml: env_passthrough_mode: Input should be 'inherit', 'clean' or 'file', got 'files'"),
    ({"schema_version": 1, "retain": {"on_pass": "big"}}, "r.yaml: retain.on_pass: Input should be 'none', 'log', 'summary' or 'full', got 'big'"),
    ({"schema_version": 1, "retain": {"on_win": "log"}}, "r.yaml: retain.on_win: unknown key; allowed: on_error, on_fail, on_pass"),
    ({"schema_version": 1, "retain": "log"}, "r.yaml: retain: must be a mapping {on_pass, on_fail, on_error}, each none, log, summary or full, got 'log'"),
    ({"schema_version": 1, "stop_after": {"events": 2}}, "r.yaml: stop_after.max_trials: required key is missing"),
    ({"schema_version": 1, "stop_after": {"events": 0, "max_trials": 2}}, "r.yaml: stop_after.events: Input should be greater than or equal to 1, got 0"),
    ({"schema_version": 1, "stop_after": {"events": 1, "max_trials": 2, "event_verdict": "crash"}}, "r.yaml: stop_after.event_verdict: Input should be 'pass', 'fail' or 'error', got 'crash'"),
    ({"schema_version": 1, "stop_after": {"events": 1, "max_trials": 2, "trials": 3}}, "r.yaml: stop_after.trials: unknown key; allowed: event_verdict, events, max_trials"),
    ({"schema_version": 1, "trials": 3, "stop_after": {"events": 1, "max_trials": 2}}, "r.yaml: trials (3) and stop_after.max_trials (2) disagree: with stop_after the cap on trials per cell is max_trials; drop trials"),
    ({"schema_version": 1, "axes": {"dtype": {}}}, "r.yaml: axes: axis 'dtype' has no variants"),
    ({"schema_version": 1, "axes": {"dtype": {"fp32": {"envs": {}}}}}, "r.yaml: axes.dtype.fp32.envs: unknown key; allowed: args, env"),
    ({"schema_version": 1, "axes": {"dtype": {"a/b": {}}}}, "r.yaml: axes: variant name 'a/b' of axis 'dtype' must use letters"),
    ({"schema_version": 1, "axes": {"d": {"x": {"args": "--fast"}}}}, "r.yaml: axes.d.x.args: Input should be a valid list, got '--fast'"),
    ({"schema_version": 1, "mitigation_axis": ["nope"]}, "r.yaml: mitigation_axis: unknown bundle(s) ['nope']; known: launch_blocking, none, tf32_off, xnack"),
    ({"schema_version": 1, "diagnostic_axis": []}, "r.yaml: diagnostic_axis: must name at least one bundle (use [none] for the baseline)"),
    ({"schema_version": 1, "command": []}, "r.yaml: command: must not be empty"),
    ({"schema_version": 1, "ticket": "../escape"}, "r.yaml: ticket: must be a directory-safe name"),
    ({"schema_version": 1, "mitigation_axis": ["none"], "axes": {"mitigation": {"a": {}}}}, "r.yaml: axes.mitigation clashes with mitigation_axis"),
]


@pytest.mark.parametrize("doc, message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_recipe_has_one_line_message(doc, message):
    with pytest.raises(RecipeError) as err:
        recipe_from_mapping(doc, "r.yaml")
    text = str(err.value)
    assert text.startswith(message), text
    assert "\n" not in text


def test_env_values_are_never_echoed():
    with pytest.raises(RecipeError) as err:
        recipe_from_mapping({"schema_version": 1, "env": {"API_TOKEN": ["hunter2"]}}, "r.yaml")
    assert "hunter2" not in str(err.value)


def test_not_a_mapping(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("- just\n- a list\n")
    with pytest.raises(RecipeError, match=r"r.yaml: a recipe must be a mapping of keys, got list"):
        load_recipe(path)


def test_yaml_syntax_error_names_line(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("schema_version: 1\ntrials: [1,\n")
    with pytest.raises(RecipeError, match=r"not valid YAML at line 3"):
        load_recipe(path)


def test_missing_file(tmp_path: Path):
    with pytest.raises(RecipeError, match=r"cannot read the recipe"):
        load_recipe(tmp_path / "absent.yaml")


def test_good_recipe_normalises(tmp_path: Path):
    path = tmp_path / "r.yaml"
    path.write_text("schema_version: 1\ntrials: 2\nenv: {OMP_NUM_THREADS: 4}\n"
                    "command: python3 bench.py --n 3\ncollect: [cprofile]\n")
    loaded = load_recipe(path)
    assert loaded.recipe.env == {"OMP_NUM_THREADS": "4"}
    assert loaded.recipe.command == ["python3", "bench.py", "--n", "3"]
    assert loaded.recipe.collect == {"cprofile": None}
    assert len(loaded.sha256 or "") == 64


def test_bundle_axes_come_first_and_expand():
    recipe = recipe_from_mapping({"schema_version": 1, "mitigation_axis": ["none", "tf32_off"],
                                  "diagnostic_axis": ["none"],
                                  "axes": {"size": {"s": {"args": ["1"]}}}}, "r")
    axes = recipe.all_axes()
    assert list(axes) == ["mitigation", "diagnostic", "size"]
    assert axes["mitigation"]["tf32_off"].env == BUNDLES["tf32_off"]
