"""The `telemetry` collector: GPU telemetry beside each trial. The class is `collector`'s; the rest are its parts."""
