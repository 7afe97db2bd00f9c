"""`aorta compare`: is NEW really faster or slower than BASE, and in which kernel? (docs/compare.md)
Nothing here is imported by `import aorta`. This module itself holds only the words of
`--fail-on`, which compare's and history's help texts need without loading the rest."""

# What each word of `--fail-on` watches, in compare and history alike (`gate.watched` is the
# rule). A watched row regresses when it is SLOWER, or LARGER for a size metric named there.
FAIL_ON_WORDS = {
    "slower": "time and rate metrics and kernels, not sizes such as max_rss_mib",
    "kernels": "kernels only",
}
FAIL_ON_HELP = ("Exit 4 when a watched row regresses: SLOWER, or LARGER for a size named here. "
                + "; ".join(f"'{word}' watches {what}" for word, what in FAIL_ON_WORDS.items())
                + "; a metric name watches that metric. Comma-separated or repeated.")
