"""Registering a third-party collector: a one-file plug-in works with the contract's defaults,
and a broken one is refused when it is first asked for, naming the collector and the field."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from aorta.base.errors import ConflictError, OptionError, UserError
from aorta.collectors import registry
from aorta.collectors.conflicts import check_conflicts
from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta_testing import install_plugin

PLUGIN = '''
from aorta.collectors.base import Capability, Collector, capture_status


class Marker(Collector):
    name = "marker"
    wrap_rank = 95

    def wrap(self, launch, out_dir, options, ctx):
        return launch.with_env({"MARKER_DIR": str(out_dir)})

    def summarize(self, out_dir, options, outcome):
        return capture_status(self.name, "empty", "nothing to read")

    def probe(self):
        return Capability(self.name, True)


class NoRank(Marker):
    name = "norank"
    wrap_rank = None


class Misnamed(Marker):
    name = "other"


class BadModel(Marker):
    name = "badmodel"
    options_model = dict


class Abstract(Collector):
    name = "abstract"
    wrap_rank = 1


class Locker(Marker):
    name = "locker"

    def claims(self, options):
        return frozenset({"gpu-lock"})


class OtherLocker(Locker):
    name = "otherlocker"
'''
ENTRIES = {"marker": "plugin:Marker", "norank": "plugin:NoRank", "misnamed": "plugin:Misnamed",
           "badmodel": "plugin:BadModel", "abstract": "plugin:Abstract",
           "broken": "plugin:NoSuchClass", "locker": "plugin:Locker",
           "otherlocker": "plugin:OtherLocker"}


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    site = install_plugin(tmp_path / "site", "plugin", PLUGIN, ENTRIES)
    monkeypatch.syspath_prepend(str(site))
    registry.get.cache_clear()
    registry._table.cache_clear()
    yield
    registry.get.cache_clear()
    registry._table.cache_clear()


def test_a_plugin_with_no_options_uses_the_contracts_defaults(plugins: None) -> None:
    marker = registry.get("marker")
    options = marker.validate(None)
    ctx = TrialContext("c", 0, Path("/t"), {})
    assert marker.wrap(Launch(("x",)), Path("/o"), options, ctx).env == {"MARKER_DIR": "/o"}
    assert marker.summarize(Path("/o"), options, TrialOutcome(0, None, False, True)) == {
        "marker_capture": "empty", "marker_capture_reason": "nothing to read"}
    assert marker.claims(options) == frozenset() and marker.child_imports(options) == ()
    with pytest.raises(OptionError, match="collect.marker.rows: unknown key"):
        marker.validate({"rows": 3})


@pytest.mark.parametrize(("name", "problem"), [
    ("norank", "collector 'norank': class NoRank does not set 'wrap_rank' to an integer"),
    ("misnamed", "collector 'misnamed': class Misnamed calls itself 'other'"),
    ("badmodel", "collector 'badmodel': class BadModel's options_model <class 'dict'> is not a "
                 "pydantic model"),
    ("abstract", "collector 'abstract': class Abstract cannot be created: TypeError"),
    ("broken", "collector 'broken': plugin:NoSuchClass cannot be loaded: AttributeError"),
    ("nothing", "unknown collector 'nothing'; known: abstract, badmodel, broken"),
])
def test_a_broken_plugin_is_refused_by_name(plugins: None, name: str, problem: str) -> None:
    with pytest.raises(UserError) as caught:
        registry.get(name)
    assert str(caught.value).startswith(problem)


def test_a_resource_of_the_plugins_own_naming_conflicts_too(plugins: None) -> None:
    options = {name: registry.get(name).validate(None) for name in ("locker", "otherlocker")}
    with pytest.raises(ConflictError, match="collect: locker and otherlocker cannot run in one "
                                            "trial: both claim gpu-lock; profile them"):
        check_conflicts(options)
