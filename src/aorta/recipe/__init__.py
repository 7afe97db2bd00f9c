"""The recipe: a strict, typed description of a sweep (`schema`), read from YAML by one
reader (`yaml_load`), with its limits and constant vocabularies (`limits`)."""
