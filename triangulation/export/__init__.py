"""Our runs in other tools' formats: :mod:`triangulation.export.inspect_logs` (Inspect AI ``.eval`` logs)."""
