"""The run directory: its layout, names, atomic and confined writes, validated reads.

`aorta.store.layout` is the only code that knows where files live under `<output>/<run>`;
`aorta.store.run_dir.RunStore` writes there and reads records as record types (the sweep,
report, compare and the Python API); `aorta sweep status` reads through `layout` alone.
"""
