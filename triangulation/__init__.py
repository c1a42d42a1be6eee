"""triangulate: correlation module, reports, and the `triangulate` command-line entry point."""
