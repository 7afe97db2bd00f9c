"""Collector pairs that cannot share a trial, refused at recipe load with the reason and fix.

Each collector claims exclusive resources for its options (`Collector.claims`); two collectors
claiming one resource conflict. A plug-in may claim a resource of its own naming.
"""

from __future__ import annotations

from collections.abc import Mapping

from aorta.base.errors import ConflictError
from aorta.collectors.base import CollectorOptions
from aorta.collectors.registry import get

# resource -> (why two claimants fight, what to do instead)
RESOURCES: dict[str, tuple[str, str]] = {
    "hsa-queue": (
        "both install an HSA queue interceptor on AMD GPUs and fight over the dispatch queues",
        "use proton: {backend: instrumentation} (the only Proton backend that coexists with "
        "rocprof), or profile them in separate runs",
    ),
    "cupti": (
        "NVIDIA allows one CUPTI subscriber per process "
        "(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)",
        "profile them in separate runs, or give each its own recipe",
    ),
}


def check_conflicts(selected: Mapping[str, CollectorOptions]) -> None:
    """Raise `ConflictError` for the first pair of collectors that claim one resource."""
    owner: dict[str, str] = {}
    for name, options in selected.items():
        collector = get(name)
        for resource in sorted(collector.claims(options)):
            if resource in owner:
                why, fix = RESOURCES.get(resource, (f"both claim {resource}",
                                                    "profile them in separate runs"))
                raise ConflictError(
                    f"collect: {owner[resource]} and {collector.describe(options)} cannot run "
                    f"in one trial: {why}; {fix}")
            owner[resource] = collector.describe(options)
