"""The recipe's vocabularies and the limits records are checked against too: small and
import-free, so the CLI's option lists and the record checks name them without the schema."""

#: The child's environment (`env_passthrough_mode`).
ENV_MODES = ("inherit", "clean", "file")
#: What a finished trial keeps, least to most (docs/sweep.md, "Recipes").
RETAIN_LEVELS = ("none", "log", "summary", "full")
MAX_TRIALS_PER_CELL = 10_000
