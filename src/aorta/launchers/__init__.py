"""Small programs a collector puts in front of a payload, run as `python -m aorta.launchers.<x>`.

A launcher runs in the payload's own interpreter, so it may import what the payload imports
(torch, for instance). It depends on nothing else from aorta: the payload's interpreter may
have only the standard library and the payload's own packages.
"""
