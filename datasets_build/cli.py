"""``triangulate data``: build, generate and push the Hub-ready datasets.

- ``triangulate data build [--datasets a,b] [--out DIR] [--push-to-hub ORG] [--allow-unverified]``
- ``triangulate data generate --benchmark globalgroup --subset S --seed N [--groups m --size n --count K --out DIR]``
- ``triangulate data push ORG [--datasets a,b] [--out DIR]``
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from tqdm import tqdm

from datasets_build import generate, sources
from datasets_build.hub import atomic_dir, push_folder
from plumbing.jsonio import ensure_output_dir
from plumbing.paths import data_root
from datasets_build.registry import builders
from plumbing.errors import UserError


def add_parser(subparsers) -> None:
    data = subparsers.add_parser("data", help="build, generate or push the Hub-ready datasets")
    sub = data.add_subparsers(dest="data_command", metavar="{build,generate,push}")
    sub.required = True

    build = sub.add_parser("build", help="build every registered dataset from the upstream sources")
    build.add_argument("--datasets", help="comma-separated builder names (default: all registered)")
    build.add_argument("--out", type=Path, help="output root (default: $TRIANGULATE_DATA or the user cache)")
    build.add_argument("--push-to-hub", metavar="ORG", help="afterwards upload each folder as dataset ORG/<name>")
    build.add_argument("--allow-unverified", action="store_true", help="accept downloaded archives with no recorded SHA-256")
    build.add_argument("--source-url", help="base URL of the archive download (default: $TRIANGULATE_SOURCE_URL or codeload.github.com)")
    build.set_defaults(func=run_build)

    gen = sub.add_parser("generate", help="sample fresh games into a Hub-ready folder")
    generate.add_arguments(gen)
    gen.set_defaults(func=run_generate)

    push = sub.add_parser("push", help="upload built folders to the Hugging Face Hub")
    push.add_argument("org", help="Hub user or organisation (datasets become ORG/<name>)")
    push.add_argument("--datasets", help="comma-separated dataset names (default: every built folder)")
    push.add_argument("--out", type=Path, help="output root the datasets were built into")
    push.set_defaults(func=run_push)
    data.set_defaults(func=run)


def run(args) -> int:
    return args.func(args)


def select(names: str | None, available: list[str], what: str) -> list[str]:
    if not names:
        return available
    chosen = [n.strip() for n in names.split(",") if n.strip()]
    unknown = [n for n in chosen if n not in available]
    if unknown:
        raise UserError(f"unknown {what} {', '.join(unknown)}; available: {', '.join(available) or 'none'}")
    return chosen


def build_all(names: list[str], out_root: Path) -> list[tuple[str, dict, float]]:
    """Run the builders into ``out_root/<name>`` atomically; returns (name, summary, seconds) per dataset."""
    registry = builders()
    results = []
    bar = tqdm(names, desc="building datasets", unit="dataset")
    for name in bar:
        bar.set_postfix_str(name)
        start = time.perf_counter()
        with atomic_dir(out_root / name) as tmp:
            summary = registry[name](tmp)
        results.append((name, summary, time.perf_counter() - start))
    bar.close()
    return results


def run_build(args) -> int:
    start = time.perf_counter()
    sources.configure(allow_unverified=args.allow_unverified, base_url=args.source_url)
    names = select(args.datasets, sorted(builders()), "dataset")
    out_root = ensure_output_dir((args.out or data_root()).expanduser().resolve(), "--out" if args.out else "$TRIANGULATE_DATA")
    results = build_all(names, out_root)
    for name, summary, seconds in results:
        print(f"{name:14s} configs={summary.get('configs', '?'):>4} rows={summary.get('rows', '?'):>7} {seconds:7.1f} s  -> {out_root / name}")
    print(f"built {len(results)} dataset(s) in {time.perf_counter() - start:.1f} s wall time")
    if args.push_to_hub:
        for name, _, _ in results:
            print(f"pushed {name}: {push_folder(out_root / name, f'{args.push_to_hub}/{name}')}")
    return 0


def run_generate(args) -> int:
    start = time.perf_counter()
    summary = generate.run_generator(args)
    print(f"generated {summary['rows']} games ({summary['configs']} config) -> {summary['out']} in {time.perf_counter() - start:.1f} s")
    return 0


def run_push(args) -> int:
    out_root = (args.out or data_root()).expanduser().resolve()
    built = sorted(p.name for p in out_root.glob("*") if (p / "README.md").is_file()) if out_root.is_dir() else []
    for name in select(args.datasets, built, "built dataset"):
        print(f"pushed {name}: {push_folder(out_root / name, f'{args.org}/{name}')}")
    return 0
