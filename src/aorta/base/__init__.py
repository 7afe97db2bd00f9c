"""The bottom layer: errors, redaction, names, and running the host's tools. Imports nothing
from the rest of aorta."""
