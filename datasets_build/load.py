"""Loaders for the built folders, used by the lm-eval tasks (``custom_dataset: !function ...``).

lm-eval calls ``custom_dataset`` as ``fn(**metadata, **dataset_kwargs)``, so every loader accepts
``**kwargs``. ``path=`` (e.g. in ``dataset_kwargs``) points at another built folder, such as one
written by ``triangulate data generate``. Shards are read straight from parquet into memory (no
Hugging Face cache writes, works offline); features come from the parquet schema metadata.

``load_hub_files`` is the one exception: datasets that exist only on the Hugging Face Hub (CLadder v1.5,
SimpleToM) are fetched by ``datasets`` into its cache at task time, or read from a local folder of the
same layout through the same call.
"""

from __future__ import annotations

from pathlib import Path

import datasets
import pyarrow.parquet as pq

from datasets_build.hub import SHARD_NAME
from plumbing.errors import UserError
from plumbing.paths import BUILD_HINT, dataset_dir


def built_configs(folder: Path) -> dict[str, dict[str, Path]]:
    """{config: {split: parquet path}} of a built folder (``data/<config>/<split>-00000-of-00001.parquet``)."""
    suffix = SHARD_NAME.format(split="")
    out: dict[str, dict[str, Path]] = {}
    for shard in sorted((Path(folder) / "data").glob(f"*/*{suffix}")):
        out.setdefault(shard.parent.name, {})[shard.name[: -len(suffix)]] = shard
    return out


def load_config(name: str, config: str, path: str | Path | None = None) -> datasets.DatasetDict:
    """One config of built dataset ``name`` (or of the folder ``path``) as a DatasetDict."""
    folder = Path(path).expanduser() if path else dataset_dir(name)
    configs = built_configs(folder)
    if not configs:
        raise UserError(f"no built dataset in {folder}: {BUILD_HINT}")
    if config not in configs:
        known = ", ".join(sorted(configs)[:12]) + (" ..." if len(configs) > 12 else "")
        raise UserError(f"unknown {name} config {config!r} in {folder}; available: {known}")
    return datasets.DatasetDict({split: datasets.Dataset(pq.read_table(shard)) for split, shard in configs[config].items()})


def load_globalgroup(config: str = "en_4x4", path: str | Path | None = None, **kwargs) -> datasets.DatasetDict:
    """GlobalGroup config ``<subset>_<g>x<w>`` (splits dev, test; generated folders: test only).

    A generated folder gets the built folder's ``dev`` split of the same config (the tasks draw few-shot
    examples from ``dev``), or an empty ``dev`` when that is not built (zero-shot still works).
    """
    data = load_config("globalgroup", config, path)
    if path and "dev" not in data:
        built = built_configs(dataset_dir("globalgroup", must_exist=False)).get(config, {})
        data["dev"] = datasets.Dataset(pq.read_table(built["dev"])) if "dev" in built else data["test"].select([])
    return data


def load_connections(config: str = "default", path: str | Path | None = None, **kwargs) -> datasets.DatasetDict:
    """NYT Connections (splits test: 438 games, fewshot: 3)."""
    return load_config("connections", config, path)


def load_hub_files(source: str | Path, data_files: dict[str, str], revision: str | None = None, hint: str = "") -> datasets.DatasetDict:
    """``datasets.load_dataset(source, data_files=...)``: ``source`` is a Hub dataset id or a local folder
    with the same file layout (the same call either way, so a local copy exercises the Hub path).

    ``data_files`` maps split -> file path inside the repository; ``revision`` pins a Hub commit.
    Download or format problems become one ``UserError`` (``hint`` says how to use a local copy).
    """
    local = Path(str(source)).expanduser()
    if local.exists():
        source = str(local.resolve())
        missing = [f for f in data_files.values() if not (local / f).is_file()]
        if missing:
            raise UserError(f"{local} lacks {', '.join(missing)} (expected the Hub repository's layout)")
    try:
        return datasets.load_dataset(str(source), data_files=dict(data_files), revision=revision)
    except (OSError, ValueError, ConnectionError) as exc:
        raise UserError(f"cannot load {source} ({type(exc).__name__}: {str(exc)[:200]}){'; ' + hint if hint else ''}") from None


def load_lm_pragmatics(config: str = "coherence", path: str | Path | None = None, **kwargs) -> datasets.DatasetDict:
    """LM-Pragmatics phenomenon ``config`` (splits seed_0 .. seed_4; the built folder of ``datasets_build.lm_pragmatics``)."""
    return load_config("lm_pragmatics", config, path)
