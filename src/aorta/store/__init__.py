"""The run directory: its layout, names, atomic and confined writes, validated reads."""
