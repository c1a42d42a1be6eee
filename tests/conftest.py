"""Shared fixtures: the upstream folder, a built-data folder, one loaded SmolLM2 per session,
lm-eval's own task index read once per process, a counter of model-args parses (issue 28), and the README's real `lm_eval` line on SmolLM2 that several slow
tests check (run once per session)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import models.ref

REPO = Path(__file__).resolve().parents[1]


def _upstream() -> Path | None:
    value = os.environ.get("TRIANGULATE_UPSTREAM")
    if value:
        return Path(value).resolve()
    guess = REPO.parent / "shared" / "upstream"
    return guess if guess.is_dir() else None


@pytest.fixture(scope="session")
def upstream() -> Path:
    """The upstream data folder; tests that need it fail loudly (never skip) when it is absent."""
    path = _upstream()
    assert path is not None and path.is_dir(), "set TRIANGULATE_UPSTREAM to ../shared/upstream"
    os.environ["TRIANGULATE_UPSTREAM"] = str(path)
    return path


@pytest.fixture
def built_data(upstream, monkeypatch) -> Path:
    """Every dataset built once per process from the upstream copy; ``TRIANGULATE_DATA`` points at it."""
    from tests.support.built_data import use_built_data

    return use_built_data(upstream, monkeypatch)


@pytest.fixture(scope="session")
def smollm2():
    """One HFLM of the embedded SmolLM2 model for the whole session (loading costs ~30 s)."""
    import lm_eval.models  # noqa: F401  (fills the registry)
    from lm_eval.api.registry import get_model

    from models.default_model import default_model_args

    return get_model("hf").create_from_arg_string(default_model_args(device="cpu"), {"batch_size": 1})


@pytest.fixture(scope="session")
def readme_lm_eval_run(upstream, tmp_path_factory):
    """The README's ``lm_eval`` line on the embedded SmolLM2, run once per session (tests/support/shared_runs.py)."""
    from tests.support.shared_runs import readme_lm_eval

    return readme_lm_eval(upstream, tmp_path_factory.mktemp("readme-lm-eval"))


@pytest.fixture
def parses(monkeypatch) -> list:
    """(Counts parses per command, issue 28.) Every call of the one model-args parser, wherever a module imported it by name."""
    real = models.ref.parse_model_args
    calls: list = []

    def counting(value):
        calls.append(value)
        return real(value)

    for module in list(sys.modules.values()):
        if getattr(module, "parse_model_args", None) is real:
            monkeypatch.setattr(module, "parse_model_args", counting)
    return calls


@pytest.fixture(autouse=True)
def _one_lm_eval_task_index():
    """lm-eval's own ~14,000 task files indexed once per process, not once per TaskManager (~30 s idle each):
    tests/support/lm_eval_index.py. Installed once lm-eval is imported (a test that never imports it pays nothing)."""
    if "lm_eval" in sys.modules:
        from tests.support.lm_eval_index import share_builtin_index

        share_builtin_index()


@pytest.fixture(autouse=True)
def _no_log_handlers_on_closed_streams():
    """lm-eval and our CLI attach stream handlers to the ``sys.stderr`` of the moment; under pytest that is a
    capture stream closed after its test, and a later test's log line would print a "Logging error"
    traceback. Drop such handlers before each test (a pytest artefact: real processes keep their stderr)."""
    import logging

    loggers = [logging.getLogger(), *(x for x in logging.Logger.manager.loggerDict.values() if isinstance(x, logging.Logger))]
    for logger in loggers:
        for handler in list(logger.handlers):
            stream = getattr(handler, "stream", None)
            if stream is not None and getattr(stream, "closed", False):
                logger.removeHandler(handler)
    yield
