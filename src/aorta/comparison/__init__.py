"""`aorta compare`: is NEW really faster or slower than BASE, and in which kernel?

Stages, one module each: `load` (run directories to per-trial samples), `names` (kernel-name
normalisation, with the demangler's hook), `median_law`, `interval` and `ratio_grid` (the
ratio of medians and its exact bootstrap interval), `rank_null` and `stats` (the rank test,
exact with ties, and its guard), `advice` (how many more trials), `verdict` (the rule),
`family` (p-values adjusted across rows), `build` (rows for every shared metric and kernel),
`gate` (which rows fail a CI job), `wording`, `render` and `render_html` (text, Markdown, JSON,
HTML, written with the render kit `aorta.rendering`). Nothing here is imported by `import aorta`.
"""
