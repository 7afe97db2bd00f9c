"""The `cprofile` collector: Python's cProfile. The class is `collector`'s; the rest are its parts."""
