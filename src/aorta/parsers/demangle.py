"""Itanium C++ names, demangled once, the way the C++ runtime prints them.

Proton writes what CUPTI and roctracer hand it (`_ZN7cutlass7Kernel2I...EEvNT_6ParamsE`); the
PyTorch profiler and Nsight Compute print `void cutlass::Kernel2<...>(...)`. First usable wins:
`cxxfilt` (`__cxa_demangle`, as Kineto), `c++filt` or `llvm-cxxfilt` on PATH, none. A refused
name stays as it is; results are cached per process. See docs/collectors/reading.md.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable

_MANGLED = re.compile(r"^_{1,2}Z[A-Za-z0-9_.$]+$")
_TOOLS = ("c++filt", "llvm-cxxfilt")
_TOOL_TIMEOUT_S = 30.0
_cache: dict[str, str] = {}


def looks_mangled(name: str) -> bool:
    """True for an Itanium-mangled symbol (`_Z...`, or `__Z...` as on macOS): only those are
    handed to a demangler."""
    return name.startswith(("_Z", "__Z")) and _MANGLED.match(name) is not None


def demangle(name: str) -> str:
    """The demangled form of `name`, or `name` itself when it is not mangled or no demangler
    can read it. Never raises."""
    return demangle_all([name])[name]


def demangle_all(names: Iterable[str]) -> dict[str, str]:
    """name -> demangled name for every one of `names`, in one batch. Never raises."""
    names = list(names)
    if todo := [n for n in dict.fromkeys(names) if n not in _cache and looks_mangled(n)]:
        _cache.update(_backend_choice()[1](todo))
    return {n: _cache.get(n, n) for n in names}


@functools.cache
def _backend_choice() -> tuple[str, Callable[[list[str]], dict[str, str]]]:
    try:
        import cxxfilt

        cxxfilt.demangle("_Z1fv")
    except Exception:  # not installed, or no C++ runtime library to load
        pass
    else:
        return "cxxfilt", _with_cxxfilt
    for tool in _TOOLS:
        if path := shutil.which(tool):
            return path, functools.partial(_with_tool, path)
    return "none", _unchanged


def _with_cxxfilt(names: list[str]) -> dict[str, str]:
    import cxxfilt

    out = {}
    for name in names:
        try:
            out[name] = cxxfilt.demangle(name.removeprefix("_") if name.startswith("__Z")
                                         else name) or name
        except Exception:   # cxxfilt.InvalidName, or a runtime that refuses this name
            out[name] = name
    return out


def _with_tool(tool: str, names: list[str]) -> dict[str, str]:
    """c++filt reads one name a line; on any failure the names stay unchanged."""
    try:
        result = subprocess.run([tool], input="\n".join(names) + "\n", capture_output=True,
                                text=True, timeout=_TOOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return {n: n for n in names}
    lines = result.stdout.splitlines()
    if result.returncode != 0 or len(lines) != len(names):
        return {n: n for n in names}
    return {n: (line or n) for n, line in zip(names, lines)}


def _unchanged(names: list[str]) -> dict[str, str]:
    return {n: n for n in names}
