"""Issue 30 items 2, 4, 6, 8, 9: what `triangulate play` guarantees against a hostile server (a fake
OpenAI-compatible one on 127.0.0.1) and a damaged run folder: an HTTP 200 that is no reply is a backend failure,
never a scored empty answer; a resume without the settings file still refuses other settings; a key the
server echoes, a secret-named gen_kwarg and a URL password holding ``'`` are written nowhere."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from tests.support.fake_chat import FakeChatServer
from triangulation.cli.main import main

KEY = "ECHOKEY-i30a-77"


def _chat(server: FakeChatServer, out: Path, *extra: str, userinfo: str = "", key: str | None = None) -> list[str]:
    args = f"model=fake,base_url={server.url(userinfo)},tokenizer_backend=None" + (f",api_key={key}" if key else "")
    return ["play", "--model", "local-chat-completions", "--model_args", args, "--tasks", "wcst", "--limit", "1"] + [
        "--retries",
        "1",
        "--output_path",
        str(out),
        *extra,
    ]


def _records(out: Path) -> list[dict]:
    [episodes] = list(out.rglob("episodes_wcst.jsonl"))
    return [json.loads(line) for line in episodes.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize(
    "body, says",
    [
        ('{"error": {"message": "quota exceeded", "type": "insufficient_quota"}}', "quota exceeded"),
        (
            '{"choices": [{"index": 0, "finish_reason": "length", "message": {"role": "assistant", "content": null}}]}',
            "content null",
        ),
        ('{"choices": "overloaded"}', '"choices": "overloaded"'),
    ],
    ids=["error_body", "null_content", "malformed_choices"],
)
def test_an_http_200_that_is_no_reply_is_a_backend_failure_and_resumable(tmp_path, capsys, body, says):
    """Item 2: recorded as a failed episode (not an empty reply scored 0), the message quotes what the server
    sent, and once the server answers the same command plays that episode."""
    with FakeChatServer(body=body) as server:
        argv = _chat(server, tmp_path)
        assert main(argv) == 2  # every episode failed: one line, no results claiming a score
        last = capsys.readouterr().err.strip().splitlines()[-1]  # after the progress bars: the one error line
        assert last.startswith("triangulate: error: every episode failed") and "HTTP 200" in last and says in last, last
        [record] = _records(tmp_path)
        assert record["failed"] and record["scores"] == {} and says in record["error"]
        [results] = [json.loads(p.read_text()) for p in tmp_path.rglob("results_*.json")]
        assert results["n-samples"]["wcst"]["effective"] == 0 and results["results"]["wcst"]["n_failed"] == 1  # nothing scored
        server.body = None  # the server recovers: the rerun plays the failed episode
        assert main(argv) == 0
    [record] = _records(tmp_path)
    assert not record["failed"] and record["scores"]


def _random(out: Path, seed: str, *extra: str, limit: str = "2") -> list[str]:
    return ["play", "--model", "random", "--tasks", "wcst", "--limit", limit, "--seed", seed, "--output_path", str(out), *extra]


def test_without_the_settings_file_a_resume_with_another_seed_is_refused(tmp_path, capsys):
    """Item 4: every record stores its seed and the fingerprint of its settings; with
    ``episodes_<task>.settings.json`` deleted they still refuse another seed or other settings."""
    assert main(_random(tmp_path, "1")) == 0
    folder = tmp_path / "random"
    before = (folder / "episodes_wcst.jsonl").read_bytes()
    for changed in (_random(tmp_path, "2", limit="3"), _random(tmp_path, "1", "--gen_kwargs", "temperature=0.3", limit="3")):
        (folder / "episodes_wcst.settings.json").unlink(missing_ok=True)
        capsys.readouterr()
        assert main(changed) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "settings.json is missing" in err[0] and "--overwrite" in err[0], err
        assert (folder / "episodes_wcst.jsonl").read_bytes() == before  # no episode of another seed mixed in
        assert not (folder / "episodes_wcst.settings.json").exists()  # and no settings file claiming the new seed
    (folder / "episodes_wcst.settings.json").unlink(missing_ok=True)
    assert all(r["seed"] == 1 and len(r["settings_id"]) == 16 for r in _records(tmp_path))  # what the check reads
    assert main(_random(tmp_path, "1", limit="3")) == 0  # the same settings resume and adopt the records
    assert len(_records(tmp_path)) == 3 and json.loads((folder / "episodes_wcst.settings.json").read_text())["seed"] == 1


def test_a_seed_change_names_the_seed_when_the_settings_file_is_gone(tmp_path, capsys):
    assert main(_random(tmp_path, "1")) == 0
    (tmp_path / "random" / "episodes_wcst.settings.json").unlink()
    capsys.readouterr()
    assert main(_random(tmp_path, "2")) == 2
    assert "seed: 1 -> 2" in capsys.readouterr().err


def test_a_key_the_server_echoes_is_stored_nowhere_and_shown_nowhere(tmp_path, capsys):
    """Item 6: the server echoes the API key and the Authorization header it got (HTTP Basic, from a URL login)
    into every reply; the episodes file and the viewer's pages hold ``<redacted>`` instead, as ``eval``'s
    samples do."""
    import base64

    password = "ECHOPASS-i30a-31"
    basic = base64.b64encode(f"user:{password}".encode()).decode()
    with FakeChatServer(lambda headers: json.dumps(f"my key is {KEY}; you sent {headers.get('Authorization', '')}")) as server:
        assert main(_chat(server, tmp_path, key=KEY, userinfo=f"user:{password}")) == 0
    assert any(basic in h.get("Authorization", "") for h in server.headers)  # the login did reach the server
    assert main(["view", str(tmp_path), "--out", str(tmp_path / "view")]) == 0
    [episodes] = list(tmp_path.rglob("episodes_wcst.jsonl"))
    assert "my key is <redacted>; you sent Basic <redacted>" in episodes.read_text(encoding="utf-8")
    assert "my key is &lt;redacted&gt;" in (tmp_path / "view" / "wcst.html").read_text(encoding="utf-8")
    for secret in (KEY, password, basic):
        leaks = [str(p) for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert not leaks, (secret, leaks)
        assert secret not in "".join(capsys.readouterr())


def test_a_secret_named_gen_kwarg_is_redacted_in_settings_and_results(tmp_path, capsys):
    """Item 8: ``--gen_kwargs auth_token=...`` is sent with the requests but stored as ``<redacted>``."""
    token = f"gen{uuid.uuid4().hex[:12]}"  # made at run time: no literal secret in the source
    assert main(_random(tmp_path, "1", "--gen_kwargs", f"auth_token={token}")) == 0
    written = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name.endswith(".settings.json") for p in written) and any(p.name.startswith("results_") for p in written)
    leaks = [str(p) for p in written if token.encode() in p.read_bytes()]
    assert not leaks, leaks
    results = json.loads(next(p for p in written if p.name.startswith("results_")).read_text())
    assert results["config"]["gen_kwargs"] == {"auth_token": "<redacted>"}
    assert token not in "".join(capsys.readouterr())
    assert main(_random(tmp_path, "1", "--gen_kwargs", "auth_token=ANOTHERTOKEN9", limit="3")) == 0  # a new token: no new setting


def test_a_url_password_with_a_quote_is_not_in_the_resume_message(tmp_path, capsys):
    """Item 9: a ``'`` is legal in a URL password; the "resume with:" line quotes the command for a shell, and
    the password must not come through that quoting. lm-eval's ``--model_args`` parser also reads the ``'`` as
    a quote and swallows the ``api_key=...`` after it into the URL's value: the key is written nowhere either."""
    password, key = "PA'SS-i30a-secret", "QUOTEKEY-i30a-88"
    with FakeChatServer() as server:
        argv = _chat(server, tmp_path, userinfo=f"user:{password}", key=key)
        assert main(argv) == 0  # the first episode finishes
        server.body = '{"error": {"message": "down"}}'
        capsys.readouterr()
        assert main([*argv, "--limit", "2"]) == 1  # the second one fails: the run says how to resume
    out, err = capsys.readouterr()
    assert "resume with: triangulate play" in err and "<redacted>" in err
    for secret in ("SS-i30a-secret", key):
        assert secret not in out + err
        leaks = [str(p) for p in tmp_path.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]
        assert not leaks, (secret, leaks)
