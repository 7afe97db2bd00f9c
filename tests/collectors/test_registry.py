"""Registering a third-party collector: a one-file plug-in works with the contract's defaults,
and a broken one is refused when it is first asked for, naming the collector and the field,
while `aorta collectors` and `aorta doctor` go on to list every other collector."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from aorta.base.errors import ConflictError, OptionError, UserError
from aorta.collectors import registry
from aorta.collectors.conflicts import check_conflicts
from aorta.collectors.registry import PLUGIN_FIX
from aorta.collectors.base import Launch, TrialContext, TrialOutcome
from aorta_testing import install_plugin, run_aorta

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


class LookupBug(Marker):
    name = "lookupbug"

    def child_imports(self, options):
        raise RuntimeError("lookup bug")


class Raiser(Marker):
    name = "raiser"

    def probe(self):
        raise RuntimeError("probe bug")
'''
ENTRIES = {"marker": "plugin:Marker", "norank": "plugin:NoRank", "misnamed": "plugin:Misnamed",
           "badmodel": "plugin:BadModel", "abstract": "plugin:Abstract",
           "broken": "plugin:NoSuchClass", "locker": "plugin:Locker",
           "otherlocker": "plugin:OtherLocker", "raiser": "plugin:Raiser",
           "lookupbug": "plugin:LookupBug"}


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


def test_collectors_and_doctor_list_a_broken_plugin_beside_the_others(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "plugin", PLUGIN, ENTRIES)
    env = {**os.environ, "PYTHONPATH": str(site)}
    listed = run_aorta("collectors", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    rows = {row["name"]: row for row in json.loads(listed.stdout)}
    assert set(ENTRIES) | {"cprofile", "torch", "ncu"} <= set(rows)
    assert rows["marker"]["usable"] and rows["cprofile"]["usable"]
    assert not rows["broken"]["usable"] and rows["broken"]["options"] == []
    assert rows["broken"]["reason"].startswith(
        "collector 'broken': plugin:NoSuchClass cannot be loaded: AttributeError")
    assert "uninstall the package that registers it" in rows["broken"]["fix"]
    assert rows["raiser"]["reason"] == "collector 'raiser': its probe failed: RuntimeError: probe bug"

    doctor = run_aorta("doctor", env=env)
    assert doctor.returncode == 0, doctor.stderr
    assert any(line.startswith("NO  abstract ") for line in doctor.stdout.splitlines())
    assert any(line.startswith("ok  cprofile ") for line in doctor.stdout.splitlines())
    lookup_row = next(line for line in doctor.stdout.splitlines() if " lookupbug " in line)
    assert lookup_row.startswith("NO ") and lookup_row.endswith(
        "collector 'lookupbug': its interpreter lookup failed: RuntimeError: lookup bug")

    asked = run_aorta("doctor", "--collect", "cprofile,broken", env=env)
    assert asked.returncode == 2 and "NO  broken" in asked.stdout
    assert run_aorta("doctor", "--collect", "marker", env=env).returncode == 0
    unknown = run_aorta("doctor", "--collect", "nothing", env=env)
    assert unknown.returncode == 2 and "unknown collector 'nothing'" in unknown.stderr

    sweep = run_aorta("sweep", "run", "--output", str(tmp_path / "out"), "--collect", "broken",
                      "--", "true", env=env)
    assert sweep.returncode == 2 and "Traceback" not in sweep.stderr
    assert "--collect: collector 'broken': plugin:NoSuchClass cannot be loaded" in sweep.stderr
    assert not (tmp_path / "out").exists()
    raised = run_aorta("sweep", "run", "--output", str(tmp_path / "out"), "--collect", "raiser",
                       "--", sys.executable, "-c", "pass", env=env)
    assert raised.returncode == 2 and "Traceback" not in raised.stderr
    assert raised.stderr == ("aorta: error: collector raiser cannot measure on this machine: "
                             "collector 'raiser': its probe failed: RuntimeError: probe bug; "
                             f"{PLUGIN_FIX}\n")
    lookup = run_aorta("sweep", "run", "--output", str(tmp_path / "out"), "--collect",
                       "lookupbug", "--", sys.executable, "-c", "pass", env=env)
    assert lookup.returncode == 2 and lookup.stderr == (
        "aorta: error: collector 'lookupbug': its interpreter lookup failed: RuntimeError: "
        "lookup bug\n")
    assert not (tmp_path / "out").exists()
