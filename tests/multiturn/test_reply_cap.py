"""Issue 30 item 16: a reply longer than ``--max_reply_chars`` (default 100,000 characters) is cut before the
game sees it or it is stored; the episode's call records the original length (``cut_from``) and a warning
says so. Played against a fake OpenAI-compatible server sending long replies."""

from __future__ import annotations

import json

import pytest

from tests.support.fake_chat import FakeChatServer
from triangulation.cli.main import main


def _play(out, server, *extra: str) -> int:
    args = f"model=fake,base_url={server.url()},tokenizer_backend=None"
    return main(
        [
            "play",
            "--model",
            "local-chat-completions",
            "--model_args",
            args,
            "--tasks",
            "wcst",
            "--limit",
            "1",
            "--output_path",
            str(out),
            *extra,
        ]
    )


def _calls(out) -> list[dict]:
    (line,) = (out / "fake" / "episodes_wcst.jsonl").read_text(encoding="utf-8").splitlines()
    return json.loads(line)["calls"]


@pytest.mark.parametrize("reply_chars, flags, kept", [(150_000, [], 100_000), (5_000, ["--max_reply_chars", "1000"], 1_000)])
def test_a_long_reply_is_cut_and_the_cut_recorded(tmp_path, caplog, reply_chars, flags, kept):
    with FakeChatServer('"' + "1" + "x" * (reply_chars - 1) + '"') as server:
        assert _play(tmp_path, server, *flags) == 0
    calls = _calls(tmp_path)
    assert calls and all(len(c["reply"]) == kept and c["cut_from"] == reply_chars for c in calls)
    assert any("was cut to" in r.getMessage() for r in caplog.records)


def test_a_short_reply_is_stored_whole_with_no_cut(tmp_path):
    with FakeChatServer('"1"') as server:
        assert _play(tmp_path, server) == 0
    assert all(c["reply"] == "1" and "cut_from" not in c for c in _calls(tmp_path))
