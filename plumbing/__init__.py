"""Shared plumbing: the bottom layer of triangulate, importing nothing of the project.

- :mod:`plumbing.errors`: ``UserError``, the one exception type for mistakes a user can fix.
- :mod:`plumbing.paths`: where built datasets, caches and upstream copies live (``$TRIANGULATE_*``).
- :mod:`plumbing.jsonio`: JSON/JSONL reading that names file and line (the one JSONL reader: a torn last
  line is skipped and counted), the one JSON/text encoder.
- :mod:`plumbing.atomic`: the one atomic writer (whole files: temporary file, fsync, rename; flushed appends).
- :mod:`plumbing.output_dirs`: the commands' output folders (created, checked writable).
- :mod:`plumbing.run_folder`: the run-folder layout (``results_``/``episodes_``/``samples_`` file names,
  discovery of models and tasks, the latest results of a model, the one results-JSON reader).
- :mod:`plumbing.stats`: NaN-aware means.
- :mod:`plumbing.registry`: the one name -> object registry (dataset builders, generators, play
  tasks and groups) that imports its listed modules and fails loudly when one does not import.
"""
