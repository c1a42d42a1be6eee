"""What ``triangulate eval`` keeps of what lm-eval wrote: credentials scrubbed from its results and samples files by
value (:func:`scrub_written_files`), the files of an evaluation whose server answered errors set aside
(:func:`fail_on_server_errors`), and a request cache that stores neither a credential nor an error
(:func:`install_scrubbing_request_cache`)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from models.args import scrub_secrets
from plumbing import atomic, run_folder
from plumbing.secrets import scrub, scrub_tree

#: the suffix given to the results and samples files of an evaluation whose server answered errors: kept to read,
#: never read as results (``results_*.json``, ``samples_*.jsonl`` no longer match)
SERVER_ERRORS_SUFFIX = ".server_errors"


def fail_on_server_errors(output: Path | None, since: float) -> int:
    """0, or 1 with one line when the server answered errors instead of replies (:data:`models.api.SERVER_ERRORS`):
    lm-eval scored them as empty answers, so the results and samples files it wrote since ``since`` are set aside
    (:data:`SERVER_ERRORS_SUFFIX`) and the suite's cell is failed, not done; the errors were not cached."""
    from models.api import SERVER_ERRORS

    if not SERVER_ERRORS:
        return 0
    aside = []
    if output is not None and output.is_dir():
        for path in output.rglob("*"):
            if (run_folder.is_results_file(path) or run_folder.is_samples_file(path)) and path.stat().st_mtime >= since - 1:
                aside.append(path.rename(path.with_name(path.name + SERVER_ERRORS_SUFFIX)))
    kept = f"; its files were set aside as *{SERVER_ERRORS_SUFFIX}" if aside else ""
    print(
        f"triangulate: error: the server answered {len(SERVER_ERRORS)} request(s) with an error instead of a reply "
        f"({scrub(SERVER_ERRORS[0])}); no result is kept{kept} and no error was cached: run again when the server answers",
        file=sys.stderr,
    )
    return 1


class _ScrubbingCache:
    """lm-eval's request cache (a ``SqliteDict``) storing every text response through the one scrubber."""

    def __init__(self, db: Any):
        self._db = db

    def __setitem__(self, key: str, value: Any) -> None:
        from models.api import ErrorReply

        if isinstance(value, ErrorReply):  # a server error is no answer: a rerun asks again
            return
        self._db[key] = scrub(value) if isinstance(value, str) else value

    def __getitem__(self, key: str) -> Any:
        return self._db[key]

    def __contains__(self, key: object) -> bool:
        return key in self._db

    def __getattr__(self, name: str) -> Any:  # commit, close, ...
        return getattr(self._db, name)


#: the model's request methods lm-eval's evaluator calls
REQUEST_METHODS = ("loglikelihood", "loglikelihood_rolling", "generate_until")


def install_first_request_stamp(path: Path) -> None:
    """Write the time (``time.time()``) of the run's first model request to ``path``: where a suite cell's start-up
    (imports, task index, data, model load, request building) ends and its work begins, for the calibration
    (:mod:`triangulation.suite.calibration`)."""
    import lm_eval.evaluator as evaluator

    evaluate = evaluator.evaluate

    def stamped_evaluate(*args: Any, **kwargs: Any) -> Any:
        lm = kwargs["lm"] if "lm" in kwargs else args[0]
        for name in REQUEST_METHODS:
            setattr(lm, name, _stamping(getattr(lm, name), path))
        return evaluate(*args, **kwargs)

    evaluator.evaluate = stamped_evaluate


def _stamping(method: Any, path: Path) -> Any:
    def first_stamped(*args: Any, **kwargs: Any) -> Any:
        if not path.exists():
            atomic.write_text(path, f"{time.time():.3f}")
        return method(*args, **kwargs)

    return first_stamped


def install_scrubbing_request_cache() -> None:
    """``--use_cache`` (the suite's eval cells): lm-eval's ``CachingLM`` pickles every response into a SQLite file;
    a key the server echoes into a reply would sit there raw. Its store (and the hook the model writes through)
    goes through :func:`plumbing.secrets.scrub`, as the samples file does; a rerun reads the scrubbed reply."""
    from lm_eval.api.model import CachingLM

    if getattr(CachingLM, "_scrubbing", False):
        return
    init = CachingLM.__init__

    def scrubbing_init(self, lm: Any, cache_db: str) -> None:
        init(self, lm, cache_db)
        self.dbdict = _ScrubbingCache(self.dbdict)
        lm.set_cache_hook(self.get_cache_hook())

    CachingLM.__init__ = scrubbing_init
    CachingLM._scrubbing = True


def _scrubbed_json(text: str, indent: int | None = None) -> str:
    """One JSON document (a results file, a samples line) with its credentials replaced in its values only
    (:func:`plumbing.secrets.scrub_tree`): keys are lm-eval's names (``"acc,none"``) and stay as they are, so a
    short credential value (``api_key=none``) cannot rewrite them; text that is not JSON is scrubbed as text."""
    try:
        data = json.loads(text)
    except ValueError:
        return scrub_secrets(text)
    clean = scrub_tree(data)
    if clean == data:
        return text
    return json.dumps(clean, indent=indent, ensure_ascii=False, default=str) + ("\n" if text.endswith("\n") else "")


def scrub_written_files(root: Path, since: float) -> list[Path]:
    """Replace credentials (:func:`models.loading.scrub_secrets`) in the ``.json``/``.jsonl`` files lm-eval
    wrote under ``root`` since ``since`` (its results hold ``model_args`` verbatim); rewritten atomically.
    Returns the files changed."""
    candidates = [root] if root.is_file() else root.rglob("*") if root.is_dir() else []
    changed = []
    for path in candidates:
        if path.suffix not in (".json", ".jsonl") or not path.is_file() or path.stat().st_mtime < since - 1:
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        if path.suffix == ".json":
            clean = _scrubbed_json(text, indent=2)
        else:
            clean = "".join(_scrubbed_json(line) for line in text.splitlines(keepends=True))
        if clean != text:
            atomic.write_text(path, clean, errors="surrogateescape")
            changed.append(path)
    return changed
