"""Pure artifact readers: bytes in, records out. No knowledge of sweeps or collectors."""
