"""The `proton` collector: Triton's Proton. The class is `collector`'s; the rest are its parts."""
