"""Issue 39 items 2, 3, 4: model settings named ``*_token`` are settings, not secrets; a placeholder credential
(``api_key=none``) rewrites nothing; a resume with another ``--max_reply_chars`` is refused."""

from __future__ import annotations

import json
from pathlib import Path

from plumbing.secrets import REDACTED, is_secret_key, scrub, scrub_tree
from tests.support.fake_chat import FakeChatServer
from triangulation.cli.main import main

MARK = "ENDTHINK-i39"  # a think_end_token value: a model setting, and a string the replies hold


def _chat(server: FakeChatServer, out: Path, extra_args: str, *extra: str) -> list[str]:
    args = f"model=fake,base_url={server.url()},tokenizer_backend=None,{extra_args}"
    return ["play", "--model", "local-chat-completions", "--model_args", args, "--tasks", "wcst", "--limit", "1", "--retries", "1"] + [
        "--output_path",
        str(out),
        *extra,
    ]


def _settings(out: Path) -> dict:
    [path] = list(out.rglob("episodes_wcst.settings.json"))
    return json.loads(path.read_text(encoding="utf-8"))


def test_token_settings_are_settings_and_the_resume_rule_sees_them(tmp_path, capsys):
    """Item 2 (fails on the old main: ``add_bos_token`` and ``think_end_token`` were stored as ``<redacted>``, so a
    resume with ``add_bos_token=False`` after ``True`` was accepted, and the ``think_end_token`` value was replaced
    wherever it occurred)."""
    with FakeChatServer(reply_literal=json.dumps(f"reasoning {MARK} 1")) as server:
        assert main(_chat(server, tmp_path, f"add_bos_token=True,think_end_token={MARK}")) == 0
        stored = json.dumps(_settings(tmp_path))
        assert "add_bos_token=True" in stored and f"think_end_token={MARK}" in stored
        assert REDACTED not in next(tmp_path.rglob("episodes_wcst.jsonl")).read_text(encoding="utf-8")
        assert scrub(f"a prompt holding {MARK}") == f"a prompt holding {MARK}"  # no registered secret
        capsys.readouterr()
        assert main(_chat(server, tmp_path, f"add_bos_token=False,think_end_token={MARK}", "--limit", "2")) == 2
        err = capsys.readouterr().err
        assert "add_bos_token" in err and "--overwrite" in err
    for key in ("add_bos_token", "think_end_token", "prefix_token_id", "eos_token", "pad_token"):
        assert not is_secret_key(key), key
    for key in ("token", "hf_token", "api_token", "auth_token", "access_token", "openai_api_key", "use_auth_token"):
        assert is_secret_key(key), key


def test_a_placeholder_credential_rewrites_nothing(tmp_path, capsys):
    """Item 3 (fails on the old main: ``api_key=none`` registered ``none`` as a secret, so lm-eval's metric keys
    became ``"acc,<redacted>"`` and ``"filter": "<redacted>"``); the key's value itself is still redacted."""
    with FakeChatServer(reply_literal=json.dumps("none of these; EMPTY")) as server:
        assert main(_chat(server, tmp_path, "api_key=none")) == 0
    results = next(tmp_path.rglob("results_*.json")).read_text(encoding="utf-8")
    assert '"wcst"' in results and ",none" in results and f",{REDACTED}" not in results
    assert "api_key=<redacted>" in results or "api_key" not in results
    episodes = next(tmp_path.rglob("episodes_wcst.jsonl")).read_text(encoding="utf-8")
    assert "none of these; EMPTY" in episodes
    record = {"results": {"t": {"acc,none": 1.0}}, "filter": "none", "config": {"model_args": {"api_key": "none"}}}
    assert scrub_tree(record, ["none", "EMPTY", "dummy", "test"]) == {**record, "config": {"model_args": {"api_key": REDACTED}}}
    assert scrub('"filter": "none", api_key=EMPTY') == f'"filter": "none", api_key={REDACTED}'


def test_a_resume_with_another_reply_cap_is_refused(tmp_path, capsys):
    """Item 4 (fails on the old main: ``--max_reply_chars`` was no setting, so a resume with another cap mixed cut
    and uncut episodes in one results file)."""
    with FakeChatServer(reply_literal=json.dumps("x" * 50)) as server:
        assert main(_chat(server, tmp_path, "api_key=none", "--max_reply_chars", "10")) == 0
        capsys.readouterr()
        assert main(_chat(server, tmp_path, "api_key=none", "--max_reply_chars", "20", "--limit", "2")) == 2
        err = capsys.readouterr().err
        assert "max_reply_chars" in err and "--overwrite" in err
        assert main(_chat(server, tmp_path, "api_key=none", "--max_reply_chars", "10", "--limit", "2")) == 0  # same cap: resumes
