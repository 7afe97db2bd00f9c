"""Installed distributions' versions, read from their `*.dist-info/METADATA` (or `.egg-info`
`PKG-INFO`) files on sys.path, without importing `importlib.metadata` (tens of milliseconds
at every start, with `email` and `zipfile` behind it).

It answers what `importlib.metadata.version(name)` answers: the first distribution found along
`sys.path` whose normalised name matches (`-`, `_` and `.` runs are one `_`, case ignored),
and its `Version:` header. Where that lookup could differ (a zip file or an `.egg` on sys.path,
another finder that can list distributions), it asks `importlib.metadata` itself.
"""

from __future__ import annotations

import os
import sys

__all__ = ["NOT_INSTALLED", "installed_version", "installed_versions", "installed_root",
           "declares_entry_points"]

#: What `installed_version` returns for a distribution that is not installed.
NOT_INSTALLED = object()


def installed_version(name: str) -> str | None | object:
    """The version string of distribution `name`; None when its metadata has no Version
    header; `NOT_INSTALLED` when it is not installed."""
    if not _plain_path():
        return _from_importlib(name)
    info = _find_info(name)
    return NOT_INSTALLED if info is None else _version_header(info)


def installed_versions(names: list[str] | tuple[str, ...]) -> dict[str, str | None | object]:
    """`installed_version` of each of `names`, with sys.path's folders listed once for all."""
    if not _plain_path():
        return {name: _from_importlib(name) for name in names}
    infos = _infos()
    found = {name: _find_info(name, infos) for name in names}
    return {name: NOT_INSTALLED if info is None else _version_header(info)
            for name, info in found.items()}


def installed_root(name: str) -> tuple[str | None, str] | None:
    """(version, the directory its files are installed relative to) of distribution `name`,
    as `importlib.metadata.distribution(name)` gives them (`.version`, `.locate_file("")`);
    None when it is not installed."""
    if not _plain_path():
        from importlib.metadata import PackageNotFoundError, distribution

        try:
            dist = distribution(name)
        except PackageNotFoundError:
            return None
        return dist.version, str(dist.locate_file(""))
    info = _find_info(name)
    return None if info is None else (_version_header(info), os.path.dirname(info))


def declares_entry_points(group: str) -> bool:
    """Whether any installed distribution declares entry points in `group` (an
    `entry_points.txt` section `[group]`); True where this module cannot tell exactly."""
    if not _plain_path():
        return True
    for root, child in _infos():
        try:
            with open(os.path.join(root, child, "entry_points.txt"), encoding="utf-8") as fh:
                text = fh.read()
        except (FileNotFoundError, NotADirectoryError):
            continue
        except (OSError, UnicodeDecodeError):
            return True
        if any(line.strip() == f"[{group}]" for line in text.splitlines()):
            return True
    return False


def _infos() -> list[tuple[str, str]]:
    """(sys.path entry, `*.dist-info` or `*.egg-info` name) in the order importlib finds them."""
    found = []
    for entry in sys.path:
        root = entry or "."
        try:
            children = os.listdir(root)
        except OSError:
            continue
        found += [(root, child) for child in children
                  if child.lower().endswith((".dist-info", ".egg-info"))]
    return found


def _find_info(name: str, infos: list[tuple[str, str]] | None = None) -> str | None:
    wanted = _normalize(name)
    for root, child in _infos() if infos is None else infos:
        if _normalize(child.lower().rpartition(".")[0].partition("-")[0]) == wanted:
            return os.path.join(root, child)
    return None


def _normalize(name: str) -> str:
    # importlib.metadata's Prepared.normalize: re.sub(r"[-_.]+", "-", name).lower() with "_"
    out: list[str] = []
    for char in name.lower():
        if char in "-_.":
            if not out or out[-1] != "_":
                out.append("_")
        else:
            out.append(char)
    return "".join(out)


def _version_header(info: str) -> str | None:
    """The `Version:` header of METADATA (PKG-INFO for egg-info; an `.egg-info` file is that
    text itself), as the email parser reads it: leading blanks dropped, continuation lines
    joined."""
    text = ""
    for path in (os.path.join(info, "METADATA"), os.path.join(info, "PKG-INFO"), info):
        try:
            with open(path, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError):
            continue
        if text:
            break
    value: str | None = None
    for line in text.splitlines(keepends=True):
        if value is not None:
            if line[:1] not in (" ", "\t"):
                break
            value += line                     # a folded header continues
            continue
        if not line.strip():
            break                             # the end of the headers
        key, colon, rest = line.partition(":")
        if colon and key.lower() == "version":
            value = rest.lstrip(" \t")
    if value is None:
        return None
    value = value.rstrip("\r\n")
    if "\n" in value:        # importlib.metadata's RFC 822 re-indent of a folded value
        import textwrap

        value = textwrap.dedent(" " * 8 + value)
    return value


def _plain_path() -> bool:
    """Only plain directories on sys.path, and no finder beyond the standard ones that could
    list distributions: the case this module reads exactly like importlib.metadata."""
    for finder in sys.meta_path:
        if hasattr(finder, "find_distributions") and \
                getattr(finder, "__name__", "") != "PathFinder":
            return False
    return not any(entry.endswith(".egg") or os.path.isfile(entry) for entry in sys.path)


def _from_importlib(name: str) -> str | None | object:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return NOT_INSTALLED
