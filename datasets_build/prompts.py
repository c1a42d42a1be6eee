"""Prompt builders for the word-grouping tasks (GlobalGroup A.1 / A.3, NYT Connections Appendix A).

Every prompt text is data, not code:

- GlobalGroup response prompt (seed 000, Appendix A.1): ``datasets_build/templates/globalgroup/response_<lang>.json``
  (English verbatim from the paper; es/zh/hi/ar are our translations, each file names its source).
- GlobalGroup candidate-proposal prompt (seed 000, Appendix A.3): the game's own published prompt
  (``canprop_prompt`` of the built data) or else its config's template, derived from the authors'
  published prompts (``CanProp Prompt`` column of the scored CSVs), per language and game setting.
- Connections prompt (seed 001, Appendix A): upstream ``automated_call/prompt_llm.txt`` whose
  ``InsertGame`` marker the authors' ``chatcall.py`` replaces with the shuffled words joined by ``", "``.
- Connections reasoning-judge prompt (our own, an LLM stand-in for seed 001's human judge, Sec. 4.3.2):
  ``datasets_build/templates/connections/reasoning_judge.json``.

The two upstream-derived texts are written into the built dataset folders by the builders
(:func:`write_globalgroup_prompts`, :func:`write_connections_prompt`) and read from there only at task
time: a folder that is not built is a user error naming ``triangulate data build``.
"""

from __future__ import annotations

import ast
import csv
import json
import re
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from plumbing import atomic
from plumbing.errors import UserError
from plumbing.jsonio import read_json
from plumbing.paths import BUILD_HINT, dataset_dir

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates" / "globalgroup"

CANPROP_TOPICS = "LIST_TOPICS"  # the markers of the paper's A.3 template
CANPROP_WORDS = "LIST_WORDS"
CONNECTIONS_MARKER = "InsertGame"

PROMPT_FILES_DIR = "prompts"  # inside a built dataset folder
CANPROP_FILE = "canprop_templates.json"
CONNECTIONS_PROMPT_FILE = "prompt_llm.txt"
CONNECTIONS_UPSTREAM_PROMPT = Path("automated_call") / "prompt_llm.txt"
SCORED_DIR = "Scored Games Datasets"


# ---------------------------------------------------------------------------------------- shared bits
def format_word_list(words: Sequence[str]) -> str:
    """A word list as the authors print it: Python's ``str(list)`` (``['a', 'b']``)."""
    return str([str(w) for w in words])


def format_answer(groups: Sequence[Mapping]) -> str:
    """Gold groups in the A.1 output format: ``<Topic>: ['w1', 'w2'], <Topic>: [...]``."""
    return ", ".join(f"<{g['topic']}>: {format_word_list(g['words'])}" for g in groups)


# ------------------------------------------------------------------------------- A.1 response prompt
@cache
def response_template(language: str) -> dict:
    """The A.1 template file of ``language`` (en, es, zh, hi, ar); other languages are a user error."""
    path = TEMPLATES_DIR / f"response_{language}.json"
    if not path.is_file():
        known = sorted(p.stem.removeprefix("response_") for p in TEMPLATES_DIR.glob("response_*.json"))
        raise UserError(f"no GlobalGroup prompt for language '{language}' (have: {', '.join(known)})")
    return read_json(path, "prompt template")


def globalgroup_prompt(words: Sequence[str], n_groups: int, group_size: int, language: str = "en") -> str:
    """The Appendix A.1 prompt (seed 000) for a pool of ``words`` to split into ``n_groups`` groups.

    ``#*#`` -> number of words, ``$*$`` -> number of groups; the example shown has the game's group count.
    """
    tpl = response_template(language)
    key = str(n_groups)
    if key not in tpl["examples"]:
        raise UserError(f"GlobalGroup prompts cover 2, 3 or 4 groups, not {n_groups}")
    example = tpl["examples"][key]
    return tpl["template"].format(
        n_words=len(words),
        n_groups=n_groups,
        group_size=group_size,
        n_groups_word=tpl["number_words"][key],
        example_pool=example["pool"],
        example_answer=example["answer"],
        pool=format_word_list(words),
    )


def globalgroup_doc_to_text(doc: Mapping) -> str:
    """Prompt of one built GlobalGroup game, instructions in the language its words are in."""
    return globalgroup_prompt(doc["words"], doc["n_groups"], doc["group_size"], doc["language"])


def globalgroup_doc_to_target(doc: Mapping) -> str:
    """The gold answer in the prompt's output format (used for few-shot examples from ``dev``)."""
    return format_answer(doc["groups"])


def globalgroup_item_text(doc: Mapping) -> str:
    """A game as published text, prompt then gold answer (what a model trained on the test set has seen): the
    membership probe's item text (issue 42)."""
    return globalgroup_doc_to_text(doc) + "\n" + globalgroup_doc_to_target(doc)


# -------------------------------------------------------------------- A.3 candidate-proposal prompt
def _last_list_literals(text: str, count: int) -> list[tuple[int, int, list[str]]]:
    """The last ``count`` non-overlapping ``[...]`` spans of ``text`` that are Python lists of strings.

    Each span is (start, end, items), in text order; scanning stops as soon as ``count`` are found.
    """
    closes = [j for j, c in enumerate(text) if c == "]"]
    spans: list[tuple[int, int, list[str]]] = []
    limit = len(text)
    for i in range(len(text) - 1, -1, -1):
        if text[i] != "[":
            continue
        for j in closes:
            if j <= i or j >= limit:
                continue
            try:
                value = ast.literal_eval(text[i : j + 1])
            except (ValueError, SyntaxError, MemoryError, RecursionError):
                continue
            if isinstance(value, list) and all(isinstance(v, str) for v in value):
                spans.append((i, j + 1, value))
                limit = i
            break
        if len(spans) == count:
            break
    return spans[::-1]


def split_canprop_prompt(prompt: str) -> tuple[str, list[str], list[str]]:
    """Split a published A.3 prompt into (template, topics, words).

    The topic list and the pool are the last two Python list literals of the prompt (the example lists
    before them use the translated, sometimes non-Python, quoting of each language).
    """
    spans = _last_list_literals(prompt, 2)
    if len(spans) < 2:
        raise ValueError("a candidate-proposal prompt must end with a topic list and a word list")
    (t0, t1, topics), (w0, w1, words) = spans
    template = prompt[:t0] + CANPROP_TOPICS + prompt[t1:w0] + CANPROP_WORDS + prompt[w1:]
    return template, topics, words


def canprop_prompt(template: str, topics: Sequence[str], words: Sequence[str]) -> str:
    """Fill an A.3 template: ``LIST_TOPICS`` and ``LIST_WORDS`` become ``str(list)`` of each."""
    head, sep, tail = template.partition(CANPROP_TOPICS)
    if not sep or CANPROP_WORDS not in tail:
        raise ValueError("candidate-proposal template lacks LIST_TOPICS or LIST_WORDS")
    mid, _, end = tail.partition(CANPROP_WORDS)
    return head + format_word_list(topics) + mid + format_word_list(words) + end


def canprop_templates_from_upstream(upstream_globalgroup: Path) -> dict[str, str]:
    """``{"<subset>_<g>x<w>": template}`` from the first published prompt of every scored file."""
    out: dict[str, str] = {}
    for path in sorted((upstream_globalgroup / SCORED_DIR).glob("*/test/scored_*.csv")):
        with path.open(encoding="utf-8", newline="") as fh:
            row = next(csv.DictReader(fh), None)
        if row is None or not row.get("CanProp Prompt"):
            raise UserError(f"{path}: no 'CanProp Prompt' in the first row")
        parts = path.name.split("#")  # scored_#zh-en#_#4#_#4#_#300#_#test#.csv
        subset, n_groups, group_size = parts[1].replace("-", "_"), parts[3], parts[5]
        out[f"{subset}_{n_groups}x{group_size}"] = split_canprop_prompt(row["CanProp Prompt"])[0]
    return out


def built_prompt_file(dataset: str, name: str) -> Path:
    """``<built dataset>/prompts/<name>``; a dataset (or prompt file) that is not built is a user error."""
    path = dataset_dir(dataset) / PROMPT_FILES_DIR / name
    if not path.is_file():
        raise UserError(f"dataset '{dataset}' is not built with its prompts ({path} is missing): {BUILD_HINT}")
    return path


@cache
def canprop_templates() -> dict[str, str]:
    """A.3 templates per config, from the built ``globalgroup`` folder (``prompts/canprop_templates.json``)."""
    return read_json(built_prompt_file("globalgroup", CANPROP_FILE), "built prompt file")


@cache
def derived_canprop_specs() -> dict[str, dict]:
    """Our stand-ins for unpublished A.3 templates (``templates/canprop_derived.json``), by config."""
    specs = read_json(TEMPLATES_DIR / "canprop_derived.json", "prompt template")
    return {k: v for k, v in specs.items() if not k.startswith("_")}


def derive_canprop_template(base: str, spec: Mapping[str, str]) -> str:
    """Replace the example of a published template (between ``start`` and ``end``) by ``spec['example']``."""
    i, j = base.find(spec["start"]), base.find(spec["end"])
    if i < 0 or j < i:
        raise UserError(f"cannot derive a candidate-proposal template from {spec['base']}: markers not found")
    return base[:i] + spec["example"] + base[j:]


def canprop_template(config: str) -> str:
    """The authors' A.3 prompt template of one config (``zh_4x4``); our documented stand-in where they
    published none (``templates/canprop_derived.json``); else a clear error."""
    templates = canprop_templates()
    spec = derived_canprop_specs().get(config)
    if config not in templates and spec is not None and spec["base"] in templates:
        return derive_canprop_template(templates[spec["base"]], spec)
    if config not in templates:
        raise UserError(
            f"the authors published no candidate-proposal prompt for {config} "
            f"(see upstream MISSING.txt); available: {len(templates)} configs"
        )
    return templates[config]


def globalgroup_canprop_doc_to_text(doc: Mapping) -> str:
    """The candidate-proposal prompt of one built game.

    The authors' own prompt of the game when published (``canprop_prompt``: the exact text GPT-4o-mini
    saw, so scores compare with the published columns); otherwise the config's template filled with
    the gold topics and the game's pool.
    """
    if doc.get("canprop_prompt"):
        return doc["canprop_prompt"]
    config = f"{doc['subset']}_{doc['n_groups']}x{doc['group_size']}"
    return canprop_prompt(canprop_template(config), [g["topic"] for g in doc["groups"]], doc["words"])


# --------------------------------------------------------------------------- Connections Appendix A
@cache
def connections_template() -> str:
    """``prompt_llm.txt`` of seed 001, from the built ``connections`` folder (``prompts/prompt_llm.txt``)."""
    path = built_prompt_file("connections", CONNECTIONS_PROMPT_FILE)
    text = path.read_text(encoding="utf-8")
    if CONNECTIONS_MARKER not in text:
        raise UserError(f"{path} has no '{CONNECTIONS_MARKER}' marker; is it the paper's prompt_llm.txt?")
    return text


def connections_prompt(words: Sequence[str]) -> str:
    """Appendix A prompt of seed 001 with the game's words, as the authors insert them (``w1, w2, ...``)."""
    return connections_template().replace(CONNECTIONS_MARKER, ", ".join(words))


def connections_doc_to_text(doc: Mapping) -> str:
    """Prompt of one built Connections game (its ``words`` are already shuffled by the build)."""
    return connections_prompt(doc["words"])


CONNECTIONS_TEMPLATES_DIR = Path(__file__).resolve().parent / "templates" / "connections"
_JUDGE_MARKER = re.compile(r"\{(gold|words|predicted|response)\}")
JUDGE_RESPONSE_CHARS = 6000  # the response shown to the reasoning judge is cut after this many characters


@cache
def reasoning_judge_template() -> str:
    """Our judge prompt for seed 001's categorical reasoning check (markers ``{gold}``, ``{words}``,
    ``{predicted}``, ``{response}``)."""
    return str(read_json(CONNECTIONS_TEMPLATES_DIR / "reasoning_judge.json", "template")["template"])


def reasoning_judge_prompt(predicted: str | None, gold: str, words: Sequence[str], response: str) -> str:
    """The judge prompt for one correctly clustered group: the group's words, the gold category name, the
    model's own name for the group ("(none given)" when it gave none) and its whole response (its
    reasoning; cut after :data:`JUDGE_RESPONSE_CHARS`), filled in one pass (model text holding a marker
    stays literal)."""
    values = {
        "gold": str(gold),
        "words": ", ".join(map(str, words)),
        "predicted": str(predicted) if predicted else "(none given)",
        "response": str(response)[:JUDGE_RESPONSE_CHARS],
    }
    return _JUDGE_MARKER.sub(lambda m: values[m.group(1)], reasoning_judge_template())


# ------------------------------------------------------------------------------------ build support
def write_globalgroup_prompts(upstream_globalgroup: Path, folder: Path) -> Path:
    """Store the A.3 templates in a built ``globalgroup`` folder (``prompts/canprop_templates.json``).

    Called by the dataset build, so the overlap tasks work without ``$TRIANGULATE_UPSTREAM`` afterwards.
    """
    out = Path(folder) / PROMPT_FILES_DIR / CANPROP_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    templates = canprop_templates_from_upstream(Path(upstream_globalgroup))
    atomic.write_text(out, json.dumps(templates, ensure_ascii=False, indent=1, sort_keys=True) + "\n")
    return out


def write_connections_prompt(upstream_connections: Path, folder: Path) -> Path:
    """Copy upstream ``automated_call/prompt_llm.txt`` byte for byte into a built ``connections`` folder."""
    src = Path(upstream_connections) / CONNECTIONS_UPSTREAM_PROMPT
    if not src.is_file():
        raise UserError(f"{src} is missing: the Connections prompt cannot be stored with the dataset")
    out = Path(folder) / PROMPT_FILES_DIR / CONNECTIONS_PROMPT_FILE
    out.parent.mkdir(parents=True, exist_ok=True)
    atomic.write_bytes(out, src.read_bytes())
    return out


# ----------------------------------------------------------------------------------------- targets
def canprop_doc_to_target(doc: Mapping) -> str:
    """The authors' published candidate-proposal response (GPT-4o-mini), or "" where none exists."""
    return doc.get("canprop_response") or ""


def connections_doc_to_target(doc: Mapping) -> str:
    """Gold groups in the answer structure the Connections prompt asks for (``Topic: [w1, w2, w3, w4]``)."""
    lines = [f"{g['topic']}: [{', '.join(g['words'])}]" for g in doc["groups"]]
    return "Groupings:\n" + "\n".join(lines)
