"""aorta's version (pyproject.toml reads it from here), and how aorta reads another's."""

from importlib.metadata import Distribution

VERSION = "0.1.0"


def dist_version(dist: Distribution) -> str | None:
    """The distribution's Version; None where its metadata has none (`dist.version` warns
    there on Python 3.12 and 3.13, and later Pythons raise KeyError)."""
    found = dist.metadata.get_all("Version") or [None]
    return found[0] if isinstance(found[0], str) else None
