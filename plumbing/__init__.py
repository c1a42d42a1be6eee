"""Shared plumbing: the bottom layer of triangulate, importing nothing of the project.

- :mod:`plumbing.errors`: ``UserError``, the one exception type for mistakes a user can fix.
- :mod:`plumbing.paths`: where built datasets, caches and upstream copies live (``$TRIANGULATE_*``).
- :mod:`plumbing.jsonio`: JSON/JSONL reading that names file and line, writable output folders.
- :mod:`plumbing.stats`: NaN-aware means.
- :mod:`plumbing.registry`: the one name -> object registry (dataset builders, generators, play
  tasks and groups) that imports its listed modules and fails loudly when one does not import.
"""
