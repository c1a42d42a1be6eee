"""The lm-eval task folder: pass ``TASKS_DIR`` as ``--include_path`` (``triangulate eval`` does)."""

from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent
