"""aorta's Python API: run a sweep (`sweep.sweep`, `sweep.plan`), read run directories as
data (`run.open_run`, `Run`, `Trial`), compare runs (`run.compare`). The package root
(`import aorta`) offers each by name; docs/api.md shows them."""
