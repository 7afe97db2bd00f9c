"""The run directory: its layout, names, atomic and confined writes, validated reads.

`aorta.store.run_dir.RunStore` is the only code that knows where files live under
`<output>/<run>`; sweep, status, report, compare and the Python API read through it.
"""
