"""aorta's version (pyproject.toml reads it from here), and how aorta reads another's."""

from importlib.metadata import Distribution

VERSION = "0.1.0"


def dist_version(dist: Distribution) -> str | None:
    """Its Version; None where the metadata has none (`dist.version` warns then on 3.12+)."""
    found = dist.metadata.get_all("Version") or [None]
    return found[0] if isinstance(found[0], str) else None
