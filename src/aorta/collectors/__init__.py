"""Collectors: profilers that attach to a launch. See `base` for the contract."""
