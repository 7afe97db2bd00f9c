"""`aorta.dist_versions` answers what importlib.metadata answers, without importing it."""

from __future__ import annotations

import importlib.metadata
import sys
from pathlib import Path

import pytest

from aorta.dist_versions import NOT_INSTALLED, installed_version, installed_versions


def _importlib(name: str) -> object:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return NOT_INSTALLED


def test_every_installed_distribution_reads_the_same() -> None:
    names = {d.metadata["Name"] for d in importlib.metadata.distributions()}
    assert len(names) > 5
    spelled = names | {n.upper().replace("-", "_") for n in names} | {"no-such-dist-x"}
    assert {n: installed_version(n) for n in spelled} == {n: _importlib(n) for n in spelled}
    assert installed_versions(sorted(spelled)) == {n: _importlib(n) for n in sorted(spelled)}


def test_folded_headers_egg_info_files_and_empty_metadata(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "Folded.Pkg-1.0.dist-info").mkdir()
    (tmp_path / "Folded.Pkg-1.0.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: Folded.Pkg\nVersion:  1.0\n  .post1\nSummary: x\n\nVersion: 9\n")
    (tmp_path / "eggy-2.0.egg-info").write_text("Metadata-Version: 1.0\nName: eggy\nVersion: 2.0\n")
    (tmp_path / "hollow-3.0.dist-info").mkdir()
    (tmp_path / "hollow-3.0.dist-info" / "METADATA").write_text("")
    (tmp_path / "hollow-3.0.dist-info" / "PKG-INFO").write_text("Name: hollow\nVersion: 3.0\n")
    (tmp_path / "bare-4.0.dist-info").mkdir()
    (tmp_path / "bare-4.0.dist-info" / "METADATA").write_text("Name: bare\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    for name in ("folded-pkg", "Folded_Pkg", "eggy", "hollow", "bare"):
        assert installed_version(name) == _importlib(name), name
    assert installed_version("eggy") == "2.0" and installed_version("bare") is None


def test_installed_root_is_where_importlib_locates_files() -> None:
    from aorta.dist_versions import installed_root

    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        expected = importlib.metadata.distribution(name)
        assert installed_root(name) == (expected.version, str(expected.locate_file(""))), name
    assert installed_root("no-such-dist-x") is None


def test_entry_point_groups_are_found_in_entry_points_txt(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from aorta.dist_versions import declares_entry_points

    groups = {ep.group for d in importlib.metadata.distributions() for ep in d.entry_points}
    assert "console_scripts" in groups
    assert all(declares_entry_points(g) for g in groups)
    assert not declares_entry_points("aorta.no_such_group")
    info = tmp_path / "plug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Name: plug\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[aorta.no_such_group]\nx = plug:X\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    assert declares_entry_points("aorta.no_such_group")
    assert [ep.name for ep in importlib.metadata.entry_points(group="aorta.no_such_group")] == ["x"]
