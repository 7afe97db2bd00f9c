"""The run directory: its layout, names, atomic and confined writes, validated reads.
`aorta.store.layout` alone knows where files live under `<output>/<run>`; `run_dir.RunStore`
writes there and reads records as record types; `aorta sweep status` reads through `layout`.
"""
