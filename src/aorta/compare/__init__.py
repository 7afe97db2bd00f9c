"""`aorta compare`: is NEW really faster or slower than BASE, and in which kernel?

Stages, one module each: `load` (run directories to per-trial samples), `names` (kernel-name
normalisation), `stats` and `bootstrap` (the rank test, the ratio interval, trial advice),
`verdict` (the rule), `build` (rows for every shared metric and kernel), `gate` (which rows
fail a CI job), `render` and `render_html` (text, Markdown, JSON, HTML). Nothing here is
imported by `import aorta`.
"""
