"""Test support shared by tests and benchmarks (holds no tests)."""
