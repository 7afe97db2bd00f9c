"""The `rocprof` collector: rocprofv3. The class is `collector`'s; the rest are its parts."""
