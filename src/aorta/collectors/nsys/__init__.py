"""The `nsys` collector: Nsight Systems. The class is `collector`'s; the rest are its parts."""
