"""A distribution whose metadata has no Version (a broken or hand-made install) is read as
"no version" everywhere aorta asks for one, with no warning: Python 3.12 and 3.13 warn that
`Distribution.version` will raise KeyError there."""

from __future__ import annotations

import warnings
from importlib.metadata import PathDistribution
from pathlib import Path

import pytest

from aorta.base.version import dist_version
from aorta.collectors.proton.host import torch_build_vendor
from aorta.collectors.torch.collector import torch_build


def installed(site: Path, name: str, version: str | None) -> PathDistribution:
    info = site / f"{name}-0.dist-info"
    info.mkdir(parents=True)
    line = f"Version: {version}\n" if version is not None else ""
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\n{line}")
    return PathDistribution(info)


def test_a_missing_version_is_none_and_no_warning(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    torch = installed(tmp_path, "torch", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dist_version(torch) is None
        assert torch_build(torch) == "unknown"
        assert torch_build_vendor() is None
        assert dist_version(installed(tmp_path / "b", "pkg", "2.5+cpu")) == "2.5+cpu"
