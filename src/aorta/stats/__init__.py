"""Pure statistics, with no knowledge of runs, cells or verdicts: the exact bootstrap interval of
a ratio of medians, the tie-exact rank test, corrections across rows, advice on trials."""
