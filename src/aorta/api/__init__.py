"""aorta's Python API: run a sweep, read run directories as data, compare runs."""
