"""The `ncu` collector: Nsight Compute. The class is `collector`'s; the rest are its parts."""
