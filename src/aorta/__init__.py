"""aorta: run a command under GPU profilers over a matrix of variants and trust the numbers.

Importing this package is cheap on purpose: the CLI, the schema library and every profiler
binding load lazily, where they are used.
"""

__version__ = "0.1.0"
__all__ = ["__version__"]
