"""Running sweeps: one trial's process (`process`), one trial (`trial`), the loop (`sweep`)."""
