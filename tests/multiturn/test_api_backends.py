"""lm-eval's API backends work on a plain install: the project depends on ``lm-eval[api]`` (issue 15)."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

from tests.support.play_settings import load_model

REPO = Path(__file__).resolve().parents[2]


def _api_extra_requirements() -> list[str]:
    """The distributions lm-eval's ``api`` extra names, read from the installed lm_eval's metadata."""
    out = []
    for req in importlib.metadata.requires("lm_eval") or []:
        if re.search(r"""extra\s*==\s*["']api["']""", req):
            out.append(re.split(r"[ ;<>=!\[]", req, maxsplit=1)[0])
    return out


def test_pyproject_depends_on_lm_eval_with_its_api_extra_and_those_packages_are_installed():
    text = (REPO / "pyproject.toml").read_text()
    deps = text.split("dependencies = [", 1)[1].split("]\n", 1)[0]  # the [project] list (tomllib is 3.11+)
    assert re.search(r'"lm-eval\[[^\]]*\bapi\b[^\]]*\]', deps), deps
    needed = _api_extra_requirements()
    assert "tenacity" in needed
    for name in needed:
        assert importlib.metadata.version(name)  # raises PackageNotFoundError when missing


def test_local_chat_completions_and_openai_chat_completions_construct(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    local = load_model("local-chat-completions", "model=smol,base_url=http://127.0.0.1:9/v1/chat/completions,num_concurrent=2")
    from lm_eval.models.openai_completions import LocalChatCompletion

    from models.api import LocalChatCompletionsLM

    assert isinstance(local, LocalChatCompletion) and type(local) is LocalChatCompletionsLM
    assert local.model == "smol" and local.base_url.endswith("/v1/chat/completions")
    openai = load_model("openai-chat-completions", "model=gpt-4o-mini")
    assert type(openai).__name__ == "OpenAIChatCompletion" and openai.base_url.startswith("https://api.openai.com/")
    rendered = local.apply_chat_template([{"role": "user", "content": "hi"}])
    assert "hi" in str(rendered)


def test_an_empty_stop_list_is_left_out_of_chat_requests():
    """transformers serve answers 500 to `"stop": []` (lm-eval sends it when a task has no stop strings and
    the backend knows no EOS string); the runner's class leaves it out and keeps real stop strings."""
    lm = load_model("local-chat-completions", "model=smol,base_url=http://127.0.0.1:9/v1/chat/completions")
    messages = [{"role": "user", "content": "hi"}]
    assert "stop" not in lm._create_payload(messages, generate=True, gen_kwargs={"until": [], "max_gen_toks": 4})
    assert lm._create_payload(messages, generate=True, gen_kwargs={"until": ["\n\n"], "max_gen_toks": 4})["stop"] == ["\n\n"]


def test_triangulate_eval_uses_the_same_class_for_local_chat_completions():
    from lm_eval.api.registry import get_model

    from models.api import EvalChatCompletionsLM, install_in_lm_eval_registry

    install_in_lm_eval_registry()
    assert get_model("local-chat-completions") is EvalChatCompletionsLM


def test_a_chat_body_that_is_no_reply_is_an_error_naming_what_the_server_sent():
    """Issue 30 item 2: play reads replies strictly (an error object, ``content: null``, malformed ``choices``)."""
    import pytest

    from models.api import ServerReplyError, chat_reply_texts

    ok = {"choices": [{"index": 1, "message": {"content": "b"}}, {"index": 0, "message": {"content": "a"}}]}
    assert chat_reply_texts(ok) == ["a", "b"]
    for body, says in (
        ({"error": {"message": "rate limited"}}, "rate limited"),
        ({"choices": [{"index": 0, "finish_reason": "length", "message": {"content": None}}]}, "content null"),
        ({"choices": [{"index": 0, "text": "x"}]}, "malformed choice"),
        ({"choices": []}, "without a list of choices"),
        ("<html>busy</html>", "<html>busy</html>"),
        ({"choices": [{"index": 0, "message": {"content": "a"}}, {"index": 0, "message": {"content": "b"}}]}, "malformed choice"),
    ):
        with pytest.raises(ServerReplyError, match="HTTP 200") as caught:
            chat_reply_texts(body)
        assert says in str(caught.value)
