"""`aorta compare`: is NEW really faster or slower than BASE, and in which kernel? (docs/compare.md)
Nothing here is imported by `import aorta`."""
