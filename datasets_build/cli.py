"""``triangulate data``: build, generate and push the Hub-ready datasets.

- ``triangulate data build [--datasets a,b] [--out DIR] [--push-to-hub ORG] [--source-url URL] [--source-commit NAME=COMMIT --allow-unverified]``
- ``triangulate data fasttext en zh ... [--out DIR]``
- ``triangulate data generate --benchmark globalgroup --subset S --seed N [--groups m --size n --count K --out DIR]``
- ``triangulate data generate --matched TASK [--seed N --count K --out DIR]`` (a published task's fresh twin)
- ``triangulate data push ORG [--datasets a,b] [--out DIR]``
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

from tqdm import tqdm

from datasets_build import fasttext_vectors, generate, matched, sources, stamps
from datasets_build.hub import atomic_dir, is_built_dataset, push_folder
from datasets_build.manifest import manifest_names
from datasets_build.registry import builders
from plumbing.errors import UserError
from plumbing.output_dirs import check_replaceable, ensure_output_dir, remove_stale_builds
from plumbing.paths import data_root, fasttext_dir


def add_parser(subparsers) -> None:
    data = subparsers.add_parser("data", help="build, generate or push the Hub-ready datasets")
    sub = data.add_subparsers(dest="data_command", metavar="{build,generate,push,fasttext}")
    sub.required = True

    build = sub.add_parser("build", help="build every registered dataset from the upstream sources")
    build.add_argument("--datasets", help="comma-separated builder names (default: all registered)")
    build.add_argument("--out", type=Path, help="output root (default: $TRIANGULATE_DATA or the user cache)")
    build.add_argument("--push-to-hub", metavar="ORG", help="afterwards upload each folder as dataset ORG/<name>")
    build.add_argument(
        "--source-url",
        help="base URL of the raw-file downloads, <base>/<owner>/<repo>/<commit>/<path> (default: $TRIANGULATE_SOURCE_URL or raw.githubusercontent.com)",
    )
    build.add_argument(
        "--source-commit",
        action="append",
        default=[],
        metavar="NAME=COMMIT",
        help="fetch source NAME's files at COMMIT instead of the pinned one (needs --allow-unverified; repeatable)",
    )
    build.add_argument("--allow-unverified", action="store_true", help="accept the unhashed files of a --source-commit")
    build.add_argument(
        "--rebuild", action="store_true", help="build every dataset even when its inputs did not change since its last build"
    )
    build.add_argument("--download-timeout", type=float, metavar="SECONDS", help="socket timeout per download try (default 30)")
    build.add_argument("--download-retries", type=int, metavar="N", help="tries per file (default 3)")
    build.set_defaults(func=run_build)

    fasttext = sub.add_parser("fasttext", help="download the official fastText vectors cc.<lang>.300.bin (about 7 GB each)")
    fasttext.add_argument("languages", nargs="+", help="language codes, e.g. en zh")
    fasttext.add_argument("--out", type=Path, help="folder (default: $TRIANGULATE_FASTTEXT_DIR or the user cache)")
    fasttext.add_argument("--base-url", default=fasttext_vectors.DEFAULT_BASE_URL, help="where cc.<lang>.300.bin.gz files live")
    fasttext.set_defaults(func=run_fasttext)

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


def build_all(names: list[str], out_root: Path, rebuild: bool = False) -> list[tuple[str, dict, float]]:
    """Run the builders into ``out_root/<name>`` atomically; returns (name, summary, seconds) per dataset
    (summary ``{"skipped": True}`` for one whose inputs did not change since its last build: :mod:`datasets_build.stamps`)."""
    registry = builders()
    code = stamps.code_fingerprint()
    results = []
    bar = tqdm(names, desc="building datasets", unit="dataset")
    for name in bar:
        bar.set_postfix_str(name)
        start = time.perf_counter()
        if not rebuild and stamps.unchanged(out_root, name, code):
            remove_stale_builds(out_root / name)  # what a killed build left goes even when nothing is rebuilt
            results.append((name, {"skipped": True}, time.perf_counter() - start))
            continue
        sources.REQUESTED.clear()
        with atomic_dir(out_root / name) as tmp:
            summary = registry[name](tmp)
        stamps.write_stamp(out_root, name, sources.REQUESTED, code)
        results.append((name, summary, time.perf_counter() - start))
    bar.close()
    return results


def run_build(args) -> int:
    start = time.perf_counter()
    commits = dict(parse_commit(spec) for spec in args.source_commit)
    if args.allow_unverified and not commits:
        raise UserError("--allow-unverified applies only to --source-commit NAME=COMMIT; pinned sources are always verified")
    sources.configure(
        allow_unverified=args.allow_unverified,
        base_url=args.source_url,
        timeout=args.download_timeout,
        retries=args.download_retries,
        commits=commits,
    )
    names = select(args.datasets, sorted(builders()), "dataset")
    out_root = ensure_output_dir((args.out or data_root()).expanduser().resolve(), "--out" if args.out else "$TRIANGULATE_DATA")
    results = build_all(names, out_root, rebuild=args.rebuild)
    for name, summary, seconds in results:
        if summary.get("skipped"):
            print(f"{name:14s} unchanged since its last build (same sources and code), skipped -> {out_root / name} (--rebuild to build)")
            continue
        print(
            f"{name:14s} configs={summary.get('configs', '?'):>4} rows={summary.get('rows', '?'):>7} {seconds:7.1f} s  -> {out_root / name}"
        )
    if out_root == data_root().expanduser().resolve():  # the folder the registered *_fresh tasks read from
        rebuilt = [name for name, summary, _ in results if not summary.get("skipped")]
        for folder in matched.write_default_twins([name for name, _, _ in results], rebuilt):
            print(f"fresh twin     (seed {matched.DEFAULT_SEED}) -> {folder}")
    skipped = sum(1 for _, summary, _ in results if summary.get("skipped"))
    print(
        f"built {len(results) - skipped} dataset(s) in {time.perf_counter() - start:.1f} s wall time"
        + (f"; {skipped} unchanged since their last build, skipped (--rebuild builds them)" if skipped else "")
    )
    if args.push_to_hub:
        for name, _, _ in results:
            print(f"pushed {name}: {push_folder(out_root / name, f'{args.push_to_hub}/{name}')}")
    return 0


def parse_commit(spec: str) -> tuple[str, str]:
    name, _, commit = spec.partition("=")
    if not name or not re.fullmatch(r"[0-9a-f]{7,40}", commit):
        raise UserError(f"--source-commit {spec!r}: expected NAME=COMMIT (a hexadecimal commit id)")
    if name not in manifest_names():
        raise UserError(f"--source-commit {spec!r}: no upstream source '{name}'; sources: {', '.join(manifest_names())}")
    return name, commit


def run_fasttext(args) -> int:
    folder = fasttext_vectors.target_dir(args.out)
    for lang in args.languages:
        path = fasttext_vectors.download_vectors(lang, folder, args.base_url)
        print(f"{lang}: {path} ({path.stat().st_size / 1e9:.2f} GB)")
    if fasttext_dir() != folder:
        print(f"set TRIANGULATE_FASTTEXT_DIR={folder} so that the topic metrics find the vectors")
    return 0


def run_matched(args) -> dict:
    """``data generate --matched TASK``: the fresh twin of a published task (:func:`datasets_build.matched.write_matched`)."""
    related = json.loads(Path(args.related).read_text(encoding="utf-8")) if getattr(args, "related", None) else None
    return matched.write_matched(args.matched, args.seed, args.count, args.out, related, getattr(args, "private", False))


def run_generate(args) -> int:
    start = time.perf_counter()
    if getattr(args, "matched", None) and args.benchmark:
        raise UserError("give --matched TASK or --benchmark NAME, not both (--matched writes a published task's twin)")
    if args.out is not None:  # a folder of the user's, a file or a device: one line before any game is drawn
        check_replaceable(args.out, "--out", "dataset", is_built_dataset)
    summary = run_matched(args) if getattr(args, "matched", None) else generate.run_generator(args)
    print(f"generated {summary['rows']} games ({summary['configs']} config) -> {summary['out']} in {time.perf_counter() - start:.1f} s")
    if summary.get("matched_on"):
        print(f"matched on: {'; '.join(summary['matched_on'])}")
    return 0


def run_push(args) -> int:
    out_root = (args.out or data_root()).expanduser().resolve()
    built = sorted(p.name for p in out_root.glob("*") if (p / "README.md").is_file()) if out_root.is_dir() else []
    for name in select(args.datasets, built, "built dataset"):
        print(f"pushed {name}: {push_folder(out_root / name, f'{args.org}/{name}')}")
    return 0
