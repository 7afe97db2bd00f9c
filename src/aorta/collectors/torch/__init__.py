"""The `torch` collector: The PyTorch profiler. The class is `collector`'s; the rest are its parts."""
