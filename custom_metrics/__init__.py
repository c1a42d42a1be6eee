"""Pure metric functions for the word-grouping benchmarks (parsing, matching, F1, clustering, topics, difficulty)."""
