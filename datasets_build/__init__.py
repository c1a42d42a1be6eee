"""Upstream sources -> Hub-ready Hugging Face dataset folders (parquet shards + dataset card)."""
