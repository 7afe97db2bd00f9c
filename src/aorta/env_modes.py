"""The child environment's modes (recipe key `env_passthrough_mode`), in a module of their own
so that the CLI's option lists name them without loading the recipe's schema."""

ENV_MODES = ("inherit", "clean", "file")
