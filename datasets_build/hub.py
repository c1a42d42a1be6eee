"""Write Hub-ready Hugging Face dataset folders: parquet shards plus a README dataset card.

Layout (what ``datasets.load_dataset(folder, config)`` and ``huggingface_hub.upload_folder`` expect)::

    <out_dir>/README.md                                  YAML header (configs, sizes, licence) + body
    <out_dir>/data/<config>/<split>-00000-of-00001.parquet

Builds are deterministic (same rows -> byte-identical parquet: fixed Arrow schema from the
``datasets.Features``, fixed writer options, no timestamps) and atomic (:func:`atomic_dir`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import datasets
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from plumbing import atomic
from plumbing.errors import UserError
from plumbing.output_dirs import replacing_dir

SHARD_NAME = "{split}-00000-of-00001.parquet"


@dataclass(frozen=True)
class CardInfo:
    """What the dataset card says besides the config list and sizes."""

    pretty_name: str
    license: str  # a Hub licence id ("apache-2.0", "mit", "other", "unknown")
    citation: str  # BibTeX of the paper(s)
    body: str  # free-text Markdown: source, construction, field meanings, caveats
    language: tuple[str, ...] = ()
    task_categories: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source: str = ""  # upstream repository and pinned commit
    extra_yaml: Mapping[str, object] = field(default_factory=dict)


def is_built_dataset(path: Path) -> bool:
    """A dataset folder written before folders were marked (:data:`plumbing.output_dirs.OWNER_MARKER`): a card whose
    YAML header holds ``dataset_info`` and a ``data/`` folder."""
    card = Path(path) / "README.md"
    try:
        head = card.read_text(encoding="utf-8", errors="replace")[:200_000] if card.is_file() else ""
    except OSError:
        return False
    return head.startswith("---\n") and "\ndataset_info:" in head.split("\n---", 1)[0] and (Path(path) / "data").is_dir()


@contextlib.contextmanager
def atomic_dir(final: Path, flag: str = "--out") -> Iterator[Path]:
    """Yield a fresh temporary sibling of ``final``; on success it replaces ``final``, on failure it is removed
    (:func:`plumbing.output_dirs.replacing_dir`).

    The previous ``final`` (if any) is only moved aside after the new folder is complete, and
    deleted after the new one is in place, so an exception inside the block leaves it untouched. A ``final``
    that is not a dataset folder triangulate wrote (a user's files, a file, a device) is refused in one line
    naming ``flag``, before anything is built.
    """
    final = Path(final)
    with replacing_dir(final, flag, "dataset", is_built_dataset) as tmp:
        yield tmp


def write_parquet(rows: list[dict], features: datasets.Features, path: Path) -> int:
    """Write ``rows`` as one parquet file with the Arrow schema of ``features``; returns the byte size.

    The schema carries the ``huggingface`` features metadata (so ``load_dataset`` restores the exact
    ``Features``) and nothing time- or host-dependent, so equal rows give equal bytes.
    """
    schema = features.arrow_schema
    columns = set(features)
    for index, row in enumerate(rows):
        if set(row) != columns:
            raise ValueError(f"rows do not match the dataset features for {path.name}: row {index} has columns {sorted(row)}")
    try:  # plain values need no encoding (fast); Image/Audio/ClassLabel-style values go through encode_example
        table = pa.Table.from_pylist(rows, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        try:
            table = pa.Table.from_pylist([features.encode_example(r) for r in rows], schema=schema)
        except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError, TypeError, ValueError) as exc:
            raise ValueError(f"rows do not match the dataset features for {path.name}: {exc}") from exc
    path.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(
        table,
        path,
        compression="zstd",
        compression_level=9,
        use_dictionary=True,
        write_statistics=True,
        row_group_size=100_000,
        data_page_version="1.0",
    )
    return path.stat().st_size


class _NoAliasDumper(yaml.SafeDumper):
    """Safe YAML without ``&id001`` anchors (the Hub card parser and humans read plain repeats better)."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _size_category(n: int) -> str:
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "n>1M"


def _features_yaml(features: datasets.Features) -> list:
    """The card's ``dataset_info.features`` list (the same form the Hub writes)."""
    return datasets.DatasetInfo(features=features)._to_yaml_dict()["features"]


def card_text(
    configs: Mapping[str, Mapping[str, int]],
    shard_bytes: Mapping[str, Mapping[str, int]],
    features: datasets.Features,
    card: CardInfo,
) -> str:
    """README.md of the folder: YAML header (configs with data_files, dataset_info sizes) and Markdown body."""
    total = sum(n for splits in configs.values() for n in splits.values())
    header: dict[str, object] = {"pretty_name": card.pretty_name, "license": card.license}
    if card.language:
        header["language"] = list(card.language)
    if card.task_categories:
        header["task_categories"] = list(card.task_categories)
    if card.tags:
        header["tags"] = list(card.tags)
    header["size_categories"] = [_size_category(total)]
    header.update(dict(card.extra_yaml))
    feats = _features_yaml(features)
    header["configs"] = [
        {
            "config_name": name,
            "data_files": [{"split": split, "path": f"data/{name}/{SHARD_NAME.format(split=split)}"} for split in splits],
        }
        for name, splits in configs.items()
    ]
    header["dataset_info"] = [
        {
            "config_name": name,
            "features": feats,
            "splits": [{"name": split, "num_bytes": shard_bytes[name][split], "num_examples": n} for split, n in splits.items()],
            "download_size": sum(shard_bytes[name].values()),
            "dataset_size": sum(shard_bytes[name].values()),
        }
        for name, splits in configs.items()
    ]
    yaml_text = yaml.dump(header, Dumper=_NoAliasDumper, sort_keys=False, allow_unicode=True, width=120)

    split_names: list[str] = []
    for splits in configs.values():
        split_names += [s for s in splits if s not in split_names]
    table = ["| config | " + " | ".join(split_names) + " |", "|---" * (len(split_names) + 1) + "|"]
    for name, splits in configs.items():
        table.append(f"| `{name}` | " + " | ".join(str(splits.get(s, "-")) for s in split_names) + " |")
    parts = [
        f"---\n{yaml_text}---\n",
        f"# {card.pretty_name}\n",
        card.body.strip() + "\n",
        f"## Configurations and sizes\n\n{len(configs)} configurations, {total} rows in all.\n\n" + "\n".join(table) + "\n",
        f'## Loading\n\n```python\nimport datasets\nds = datasets.load_dataset("<this folder or Hub id>", "{next(iter(configs))}")\n```\n',
    ]
    if card.source:
        parts.append(f"## Source\n\n{card.source.strip()}\n")
    parts.append(f"## Licence\n\n`{card.license}`\n")
    parts.append(f"## Citation\n\n```bibtex\n{card.citation.strip()}\n```\n")
    return "\n".join(parts)


def write_hub_folder(
    out_dir: Path,
    configs: Mapping[str, Mapping[str, list[dict]]],
    features: datasets.Features,
    card: CardInfo,
) -> dict:
    """Write ``configs`` ({config: {split: rows}}) as parquet shards and a dataset card into ``out_dir``.

    Returns ``{"configs": n, "rows": n, "sizes": {config: {split: n}}}``. Config and split names
    must be path-safe; every row must match ``features``.
    """
    if not configs:
        raise ValueError("write_hub_folder needs at least one config")
    out_dir = Path(out_dir)
    sizes: dict[str, dict[str, int]] = {}
    shard_bytes: dict[str, dict[str, int]] = {}
    for name, splits in configs.items():
        for label in (name, *splits):
            if not label or "/" in label or label.startswith("."):
                raise ValueError(f"config/split name {label!r} is not path-safe")
        sizes[name], shard_bytes[name] = {}, {}
        for split, rows in splits.items():
            path = out_dir / "data" / name / SHARD_NAME.format(split=split)
            shard_bytes[name][split] = write_parquet(list(rows), features, path)
            sizes[name][split] = len(rows)
    atomic.write_text(out_dir / "README.md", card_text(sizes, shard_bytes, features, card))
    return {"configs": len(sizes), "rows": sum(sum(s.values()) for s in sizes.values()), "sizes": sizes}


def read_card_sizes(folder: Path) -> dict[str, dict[str, int]]:
    """Sizes per config/split from a built folder's card (``dataset_info``), for summaries and checks."""
    text = (Path(folder) / "README.md").read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise UserError(f"{folder}/README.md has no YAML header")
    header = yaml.safe_load(text.split("---\n", 2)[1])
    return {info["config_name"]: {s["name"]: s["num_examples"] for s in info["splits"]} for info in header.get("dataset_info", [])}


def push_folder(folder: Path, repo_id: str, private: bool = False) -> str:
    """Upload a built folder to the Hub as dataset ``repo_id`` (needs a token: ``hf auth login``)."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(folder_path=str(folder), repo_id=repo_id, repo_type="dataset")
    return str(getattr(info, "commit_url", info))
