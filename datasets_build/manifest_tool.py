"""Regenerate the source manifests from a verbatim local copy of the upstream files.

    python -m datasets_build.manifest_tool [--upstream DIR] [--check] [NAME ...]

:data:`SPEC` says, per source, which repository and commit each folder of the local copy comes from
(read from the copy's ``SOURCE`` file when the pin was made); the tool hashes every file in those
folders and writes ``datasets_build/manifests/<name>.toml``. ``--check`` compares instead of writing
(exit 1 on a difference). Files that are not verbatim upstream files are never pinned: the copy's own
notes (``SOURCE``, ``MISSING.txt``) and the texts the builders derive (``nback/prompts``,
``nback/grids_3x3.json``, ``splat/prompts``) fall outside every group.

Adding a source: add its entry to :data:`SPEC`, run the tool, commit the manifest.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from datasets_build.manifest import MANIFEST_DIR, METADATA_FILES, manifest_path
from plumbing import atomic
from plumbing.errors import UserError
from plumbing.paths import upstream_root


@dataclass(frozen=True)
class SourceFolder:
    """Files of the local folder ``local`` that are the repository's folder ``remote`` at ``commit``."""

    repo: str
    commit: str
    local: str = ""
    remote: str = ""
    files: tuple[str, ...] = ()  # paths under ``local``; empty: every file under it


def _game(game: str, commit: str, repo_dir: str | None = None) -> SourceFolder:
    return SourceFolder("clp-research/clembench", commit, f"{game}/", f"{repo_dir or game}/")


def _runs(path: str, commit: str) -> SourceFolder:
    return SourceFolder("clembench/clembench-runs", commit, files=(path,))


_RUNS_V16 = "v1.6/{model}-t0.0--{model}-t0.0/{game}/{experiment}/episode_0/interactions.json"
_GPT4T, _LLAMA3 = "gpt-4-turbo-2024-04-09", "Meta-Llama-3-8B-Instruct-hf"

SPEC: dict[str, dict] = {
    "globalgroup": {
        "groups": [SourceFolder("cgsol/globalgroup", "1fb1f4ff5dea64afe26e52bc61119bfa53b94f03")],
        "absent_from": "MISSING.txt",
    },
    "connections": {"groups": [SourceFolder("mustafamariam/LLM-Connections-Solver", "ebde95d6a8ac2bca288f77dde49c74e9ed4cbea9")]},
    "splat": {
        "groups": [
            SourceFolder(
                "chenqi008/LateralThinking",
                "723b01bb0c4f1600c851b40267e0f3a528c12275",
                files=("README.md", "config.yaml", "puzzles.xlsx", "puzzle_arena.py"),
            )
        ]
    },
    "nback": {
        "groups": [
            SourceFolder("Daniel-Gong/ChatGPT-WM", "1c1467b954687397ce65afd24fa5ec366155aa7c", "ChatGPT-WM/"),
            SourceFolder("Daniel-Gong/n-back-datasets", "33ed10b5ceab5549c4f321f10cb7d0b96bb4de2f", "n-back-datasets/"),
        ]
    },
    "clembench": {
        "groups": [
            _game("taboo", "542f8dbc6a5b231742d3b66016e535f7b0964833"),
            _game("wordle", "f8d61d6fb7987624955dc04ca4e1c060db88dae7"),
            _game("wordle_withclue", "f8d61d6fb7987624955dc04ca4e1c060db88dae7"),
            _game("wordle_withcritic", "f8d61d6fb7987624955dc04ca4e1c060db88dae7"),
            _game("referencegame", "9cd1254984e0e4a57f16b94d0265e1d76932d7fa"),
            _game("referencegame_multilingual", "536cf773a7208b3ddd67b0fe097c78be61eba410", "referencegame"),
            _game("imagegame", "945503b1a3639e6b38c9f3438e1d4d3b5fe376dd"),
            _game("privateshared", "6855115d4187399433c66a3e3eb3c31f89a5fefd"),
            SourceFolder("clp-research/clembench", "a717f23808f4865631ffde81c37b60c7da3f5ec3", files=("LICENSE",)),
        ]
    },
    "clembench-runs": {
        "groups": [
            _runs("benchmark_runs.json", "0b3c39e9005df985aed8c0c336d6c661c3a0a094"),
            _runs("v1.0/results.csv", "4509f991614c40125245e2670e2106a2248a7a5a"),
            _runs("v1.5/results.csv", "018ce2ed3dcb38c6b5ff1deb4e12ade0b391005c"),
            _runs("v1.6/results.csv", "057e6431f6d9d1c0afb46d3c04a96d034a59480a"),
            _runs("v2.0/results.csv", "1b859d35f40d269836c2fa7815e47f6084cf0b62"),
            _runs("Addenda/BenchmarkAnalysis2024/Output/v1.0-score-table.tex", "ac99d68812d75430c627beeb622010d8fc69c7aa"),
            _runs("Addenda/BenchmarkAnalysis2024/Output/v1.6-score-table.tex", "6e2ff91b4703f10822ffa282e85f736cdddd6699"),
            *(
                _runs(_RUNS_V16.format(model=model, game=game, experiment=experiment), commit)
                for model, game, experiment, commit in (
                    (_GPT4T, "taboo", "0_high_en", "18b7a1661d3913b8c8d58b6ec5bb43096492d059"),
                    (_GPT4T, "referencegame", "0_line_grids_rows", "d32ca5339abb7c961b550b0fd316a12a210670e7"),
                    (_GPT4T, "wordle", "0_high_frequency_words_no_clue_no_critic", "d32ca5339abb7c961b550b0fd316a12a210670e7"),
                    (_GPT4T, "wordle_withclue", "0_high_frequency_words_clue_no_critic", "18b7a1661d3913b8c8d58b6ec5bb43096492d059"),
                    (_GPT4T, "imagegame", "0_compact_grids", "18b7a1661d3913b8c8d58b6ec5bb43096492d059"),
                    (_LLAMA3, "taboo", "0_high_en", "617c93773e45105e112279554b3693dc43b17131"),
                    (_LLAMA3, "referencegame", "0_line_grids_rows", "fdf5f62925b16737965eb01c150c5bb42010abaa"),
                    (_LLAMA3, "wordle", "0_high_frequency_words_no_clue_no_critic", "fdf5f62925b16737965eb01c150c5bb42010abaa"),
                    (_LLAMA3, "imagegame", "0_compact_grids", "a2d8a21bc15c02186a4f3ec5b43796fcb9bf87aa"),
                )
            ),
        ]
    },
    "lm_pragmatics": {"groups": [SourceFolder("jennhu/lm-pragmatics", "9fd4be5c0e43162c9d6e09b6024cc000e40b3398")]},
    "cladder": {"groups": [SourceFolder("causalNLP/cladder", "3d2d1169b4b939a09048a6a75956c8972a93cc38")]},
    "natural_plan": {"groups": [SourceFolder("google-deepmind/natural-plan", "ca76db336072ff8931db43bc1ca8d381038cf073")]},
    "simpletom": {"groups": [SourceFolder("yulinggu-cs/SimpleToM", "0f054a75c83dbab45276696503a0324f881634b3")]},
}


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def group_files(root: Path, group: SourceFolder) -> list[str]:
    """Paths (under ``group.local``) of the group's files in the local copy, sorted."""
    folder = root / group.local
    if group.files:
        missing = [p for p in group.files if not (folder / p).is_file()]
        if missing:
            raise UserError(f"{folder}: pinned file(s) {', '.join(missing)} missing from the local copy")
        return sorted(group.files)
    if not folder.is_dir():
        raise UserError(f"{folder} is missing from the local copy")
    found = [p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()]
    return sorted(p for p in found if not (group.local == "" and p in METADATA_FILES))


def absent_paths(root: Path, spec: dict) -> list[str]:
    """Files the copy's MISSING.txt declares absent from the snapshot (``absent from snapshot: PATH``)."""
    if "absent_from" not in spec or not (root / spec["absent_from"]).is_file():
        return []
    lines = (root / spec["absent_from"]).read_text(encoding="utf-8").splitlines()
    return [line.split(":", 1)[1].strip() for line in lines if line.startswith("absent from snapshot:")]


def _toml_str(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def render(name: str, root: Path) -> str:
    """The manifest text of source ``name`` computed from the local copy ``root`` (= ``<upstream>/<name>``)."""
    spec = SPEC[name]
    lines = [
        f"# Pinned upstream files of '{name}'. Generated by `python -m datasets_build.manifest_tool {name}`",
        "# from a verbatim local copy; do not edit by hand.",
        f"name = {_toml_str(name)}",
        "absent = [" + ", ".join(_toml_str(p) for p in absent_paths(root, spec)) + "]",
    ]
    groups = spec["groups"]
    # a catch-all group at "" must not re-list files of other groups' folders
    claimed = [g.local for g in groups if g.local]
    for group in groups:
        lines += ["", "[[groups]]", f"repo = {_toml_str(group.repo)}", f"commit = {_toml_str(group.commit)}"]
        lines += [f"local = {_toml_str(group.local)}", f"remote = {_toml_str(group.remote)}", "files = ["]
        for rel in group_files(root, group):
            if group.local == "" and not group.files and any(rel.startswith(c) for c in claimed):
                continue
            path = root / group.local / rel
            lines.append(f"  {{ path = {_toml_str(rel)}, size = {path.stat().st_size}, sha256 = {_toml_str(sha256_file(path))} }},")
        lines.append("]")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m datasets_build.manifest_tool", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help=f"sources (default: all of {', '.join(SPEC)})")
    parser.add_argument("--upstream", type=Path, help="folder holding <name>/ copies (default: $TRIANGULATE_UPSTREAM)")
    parser.add_argument("--check", action="store_true", help="compare with the committed manifests instead of writing")
    args = parser.parse_args(argv)
    try:
        upstream = args.upstream or upstream_root()
        if upstream is None:
            raise UserError("pass --upstream DIR or set TRIANGULATE_UPSTREAM")
        unknown = [n for n in args.names if n not in SPEC]
        if unknown:
            raise UserError(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(SPEC)}")
        differ = []
        MANIFEST_DIR.mkdir(exist_ok=True)
        for name in args.names or list(SPEC):
            text = render(name, Path(upstream) / name)
            target = manifest_path(name)
            if args.check:
                if not target.is_file() or target.read_text(encoding="utf-8") != text:
                    differ.append(name)
            else:
                atomic.write_text(target, text)
                print(f"wrote {target} ({text.count('sha256 =')} files)")
    except UserError as exc:
        print(f"manifest_tool: error: {exc}", file=sys.stderr)
        return 2
    if differ:
        print(f"manifests differ from {upstream}: {', '.join(differ)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
