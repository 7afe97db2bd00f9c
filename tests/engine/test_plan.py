"""Planning: cells from axes, overrides, the --collect rule, conflicts, the resolved recipe."""

from __future__ import annotations

import pytest
import yaml

from aorta.base.errors import ConflictError, OptionError, RecipeError, UserError
from aorta.run.overrides import Overrides, parse_collect_flag
from aorta.run.plan import build_plan
from aorta.recipe.schema import LoadedRecipe, recipe_from_mapping


def loaded(doc):
    return LoadedRecipe(recipe=recipe_from_mapping({"schema_version": 1, **doc}, "r.yaml"),
                        path=None, sha256=None)


CMD = Overrides(command=("python3", "x.py"))


def test_cells_are_the_cartesian_product_in_axis_order():
    plan = build_plan(loaded({"axes": {
        "dtype": {"fp32": {"args": ["--dtype", "fp32"]}, "bf16": {"env": {"D": "bf16"}}},
        "size": {"s": {"args": ["--n", "1"]}, "l": {"args": ["--n", "9"]}}}}), CMD)
    assert [c.name for c in plan.cells] == ["fp32-s", "fp32-l", "bf16-s", "bf16-l"]
    cell = plan.cells[1]
    assert cell.args == ("--dtype", "fp32", "--n", "9")
    assert dict(plan.cells[2].env) == {"D": "bf16"}


def test_no_axes_gives_one_default_cell():
    plan = build_plan(loaded({}), CMD)
    assert [c.name for c in plan.cells] == ["default"]


def test_conflicting_variables_between_axes_are_refused():
    with pytest.raises(RecipeError, match="variants a.x and b.y set V to different values"):
        build_plan(loaded({"axes": {"a": {"x": {"env": {"V": "1"}}},
                                    "b": {"y": {"env": {"V": "2"}}}}}), CMD)


def test_variant_names_cannot_make_ambiguous_cell_names():
    with pytest.raises(RecipeError, match="variant name 'a-b' of axis 'p' must use letters"):
        build_plan(loaded({"axes": {"p": {"a": {}, "a-b": {}}, "q": {"b-c": {}, "c": {}}}}), CMD)


def test_cli_command_wins_over_recipe_command():
    plan = build_plan(loaded({"command": ["python3", "recipe.py"]}), CMD)
    assert plan.command == ("python3", "x.py")
    assert build_plan(loaded({"command": ["python3", "recipe.py"]}), Overrides()).command == \
        ("python3", "recipe.py")


def test_no_command_is_a_usage_error():
    with pytest.raises(UserError, match="no command to run"):
        build_plan(loaded({}), Overrides())


def test_command_that_looks_like_a_flag_is_refused():
    with pytest.raises(UserError, match="looks like an aorta option"):
        build_plan(loaded({}), Overrides(command=("--trials", "3")))


def test_collect_flag_replaces_the_list_and_keeps_survivor_options():
    doc = {"collect": {"cprofile": {"sort": "cumulative"}}}
    plan = build_plan(loaded(doc), Overrides(command=CMD.command, collect=("cprofile",)))
    assert plan.collectors["cprofile"].sort == "cumulative"  # type: ignore[attr-defined]
    plan = build_plan(loaded(doc), Overrides(command=CMD.command, collect=()))
    assert dict(plan.collectors) == {}


def test_collect_flag_names_are_validated():
    with pytest.raises(UserError, match=r"--collect: unknown collector 'nope'; known: .*cprofile"):
        build_plan(loaded({}), Overrides(command=CMD.command, collect=("nope",)))


def test_bad_collector_option_names_file_and_key():
    with pytest.raises(OptionError, match=r"r.yaml: collect.cprofile.sort: Input should be "
                                          r"'tottime' or 'cumulative', got 'wall'"):
        build_plan(LoadedRecipe(recipe=recipe_from_mapping(
            {"schema_version": 1, "collect": {"cprofile": {"sort": "wall"}}}, "r.yaml"),
            path="r.yaml", sha256=None), CMD)


def test_unknown_collector_option_lists_allowed():
    with pytest.raises(OptionError, match=r"collect.cprofile.sorting: unknown key; allowed: sort"):
        build_plan(loaded({"collect": {"cprofile": {"sorting": "x"}}}), CMD)


@pytest.mark.parametrize("flag, names", [("a,b", ("a", "b")), ("a", ("a",)), ("none", ())])
def test_parse_collect_flag(flag, names):
    assert parse_collect_flag(flag) == names


@pytest.mark.parametrize("flag", ["", ",", " , ", "a,", ",a", "a,,b", " a", "a, b", "a\tb"])
def test_parse_collect_flag_never_reads_a_hole_as_no_collector(flag):
    with pytest.raises(UserError, match="empty collector name or a space.*or none for no"):
        parse_collect_flag(flag)


def test_parse_collect_flag_rejects_mixtures():
    with pytest.raises(UserError, match="cannot be combined"):
        parse_collect_flag("none,cprofile")
    with pytest.raises(UserError, match="named twice"):
        parse_collect_flag("cprofile,cprofile")


def test_resolved_recipe_reloads_to_the_same_plan():
    doc = {"ticket": "t1", "trials": 2, "env": {"A": "1"}, "mitigation_axis": ["none", "xnack"],
           "axes": {"n": {"small": {"args": ["1"]}}}, "collect": ["cprofile"]}
    plan = build_plan(loaded(doc), Overrides(command=("python3", "x.py"), trials=4))
    text = yaml.safe_dump(plan.resolved_recipe(), sort_keys=False)
    again = build_plan(LoadedRecipe(recipe=recipe_from_mapping(yaml.safe_load(text), "resolved"),
                                    path=None, sha256=None), Overrides())
    assert again.fingerprint() == plan.fingerprint()
    assert again.trials == 4
    assert [c.name for c in again.cells] == [c.name for c in plan.cells]
    assert [dict(c.env) for c in again.cells] == [dict(c.env) for c in plan.cells]


def test_fingerprint_ignores_trial_count_but_not_command():
    a = build_plan(loaded({}), Overrides(command=("python3", "x.py"), trials=1))
    b = build_plan(loaded({}), Overrides(command=("python3", "x.py"), trials=5))
    c = build_plan(loaded({}), Overrides(command=("python3", "y.py")))
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_conflict_error_type_exists():
    assert issubclass(ConflictError, UserError)
