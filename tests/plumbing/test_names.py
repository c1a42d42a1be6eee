"""One name per meaning (issue 38, item 8): no two classes of the project share a name (there were two
``TaskSpec``, two ``Cell``, two ``Episode``, two ``Group``), one constant for the default seed, and what a
callable accepts is read from its signature, not from the text of the error a wrong call raises."""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

from plumbing.callables import takes_keyword

REPO = Path(__file__).resolve().parents[2]
PACKAGES = ("plumbing", "custom_metrics", "datasets_build", "models", "lm_eval_tasks", "multiturn", "triangulation")


def _modules():
    for package in PACKAGES:
        for path in sorted((REPO / package).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(encoding="utf-8"))


def test_no_two_classes_share_a_name():
    where: dict[str, list[str]] = defaultdict(list)
    for rel, tree in _modules():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                where[node.name].append(rel)
    assert {name: files for name, files in where.items() if len(files) > 1} == {}


def test_the_default_seed_is_written_once():
    literal = [rel for rel, tree in _modules() for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value == 1234]
    assert literal == ["plumbing/checks.py"]


def test_no_control_flow_on_exception_text():
    # `"..." in str(exc)` / `str(exc).startswith(...)`: lm-eval's "Tasks not found" ValueError is the one case no
    # type or attribute tells apart (lm-eval 0.4.13 raises a plain ValueError)
    found = [
        rel
        for rel, _ in _modules()
        for line in (REPO / rel).read_text(encoding="utf-8").splitlines()
        if re.search(r"in str\((exc|err|e)\)|str\((exc|err|e)\)\.startswith", line)
    ]
    assert found == ["triangulation/cli/eval.py"]


def test_takes_keyword_reads_the_signature():
    def plain(requests):
        return requests

    def quiet(requests, disable_tqdm=False):
        return requests

    def open_ended(requests, **kwargs):
        return requests

    assert not takes_keyword(plain, "disable_tqdm")
    assert takes_keyword(quiet, "disable_tqdm") and takes_keyword(open_ended, "disable_tqdm")


def test_a_backend_without_disable_tqdm_is_called_without_it():
    from models.retry import RetryPolicy, call_backend

    class Plain:
        def generate_until(self, requests):
            return [r.args[0].upper() for r in requests]

    assert call_backend(Plain(), ["a", "b"], {}, RetryPolicy(attempts=1)) == ["A", "B"]
