"""Issue 23 item 1: one scrubber (plumbing.secrets) for every line any command writes; secret-bearing keys in
every form they are printed, URL passwords, registered values; the suite's plans, logs and child output."""

from __future__ import annotations

import base64
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from plumbing.secrets import ScrubbingStream, register_model_args, scrub

KEY, PASSWORD = "SECRETXYZ", "PASSSECRET"
ARGS = f"model=m,base_url=http://user:{PASSWORD}@127.0.0.1:9/v1/chat/completions,api_key={KEY}"


@pytest.mark.parametrize(
    "text",
    [
        ARGS,  # model_args as typed
        f"local-chat-completions ({{'model': 'm', 'base_url': 'http://user:{PASSWORD}@h/v1', 'api_key': '{KEY}'}}), limit: 1",  # lm-eval's summary
        json.dumps({"model_args": {"api_key": KEY, "base_url": f"https://u:{PASSWORD}@h"}}),  # a results JSON
        f"Authorization: Bearer {KEY}",
        f"--model_args hf_token={KEY} --judge_model_args openai_api_key={KEY}",
    ],
)
def test_every_form_of_a_secret_is_scrubbed(text):
    clean = scrub(text)
    assert KEY not in clean and PASSWORD not in clean and "<redacted>" in clean


def test_ordinary_keys_are_left_alone():
    text = "max_tokens=5,author=me,tokenizer=gpt2,max_gen_toks=16 http://host:8000/v1"
    assert scrub(text) == text


def test_registered_values_are_scrubbed_anywhere():
    register_model_args({"api_key": "reg-istered-777"})
    assert scrub("the server said: key reg-istered-777 rejected") == "the server said: key <redacted> rejected"


def test_the_stream_wrapper_scrubs_what_is_printed():
    sink = io.StringIO()
    print(f"hf (base_url=http://u:{PASSWORD}@h,api_key={KEY})", file=ScrubbingStream(sink))
    assert KEY not in sink.getvalue() and PASSWORD not in sink.getvalue()


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "s.yaml"
    path.write_text(
        f"models:\n  - name: leaky\n    model: local-chat-completions\n    model_args: {ARGS}\n"
        "    judge: {model: local-chat-completions, model_args: {model: j, api_key: JUDGEKEY9}}\n"
        "tasks:\n  - play: splat_easy\n    limit: 1\n",
        encoding="utf-8",
    )
    return path


def test_suite_dry_run_prints_no_secret(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "triangulation", "suite", str(_suite(tmp_path)), "--output_path", str(tmp_path / "o"), "--dry_run"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    assert "leaky/splat_easy" in out.stdout
    for secret in (KEY, PASSWORD, "JUDGEKEY9"):
        assert secret not in out.stdout + out.stderr


def test_a_cells_own_output_is_scrubbed_in_its_log(tmp_path):
    """A cell that prints its command line (as lm-eval prints model_args): the log keeps none of it."""
    from triangulation.suite.placement import place
    from triangulation.suite.runner import Sweep
    from triangulation.suite.spec import load_suite
    from triangulation.suite.sweep_plan import plan_sweep

    suite = load_suite(_suite(tmp_path))
    echo = (sys.executable, "-c", "import sys; print(sys.argv); print(repr(sys.argv), file=sys.stderr); sys.exit(3)")
    first = plan_sweep(suite, tmp_path / "o", place(suite.models, [])).models[0].work[0]
    outcome = Sweep(suite, tmp_path / "o", echo, attempts=1).run_cell(first)
    assert outcome.status == "failed" and "exit 3" in outcome.detail
    log = (tmp_path / "o" / "logs" / "leaky" / "splat_easy.log").read_text()
    assert "api_key=<redacted>" in log and "--judge_model_args" in log
    for secret in (KEY, PASSWORD, "JUDGEKEY9"):
        assert secret not in log and secret not in outcome.detail


def test_a_url_password_with_a_quote_is_scrubbed_and_known():
    """Issue 30 item 9: ``'`` is legal in a URL password; it ended the scrubber's match."""
    from plumbing.secrets import secret_values_of, url_password

    url = "http://user:PA'SS-w0rd@127.0.0.1:9/v1"
    assert url_password(url) == "PA'SS-w0rd"
    assert "SS-w0rd" not in scrub(f"model=m,base_url={url}") and "user:<redacted>@127.0.0.1" in scrub(url)
    basic = base64.b64encode(b"user:PA'SS-w0rd").decode()  # what a client sends for the login, which a server may echo
    assert {"PA'SS-w0rd", basic} <= set(secret_values_of([("base_url", url)]))


def test_scrub_tree_scrubs_each_string_of_a_json_value():
    """Each string whole, so a value next to an escaped quote cannot leave broken JSON (scrubbing JSON text would)."""
    from plumbing.secrets import scrub_tree

    value = {"reply": 'say "token=abc123"', "calls": [{"reply": f"Bearer {KEY}"}], "n": 3}
    clean = scrub_tree(value)
    assert clean == {"reply": 'say "token=<redacted>"', "calls": [{"reply": "Bearer <redacted>"}], "n": 3}
    json.loads(json.dumps(clean))


def test_secrets_leave_an_argv_for_the_environment_and_come_back():
    """Issue 30 item 7: the child's argv holds placeholders, its environment the values, and the child reads them back."""
    from plumbing.secrets import hide_argv_secrets, redact_secret_keys, reveal_argv_secrets

    argv = ["play", "--model_args", ARGS, "--gen_kwargs", json.dumps({"auth_token": "TOK-123456", "temperature": 0})]
    hidden, env = hide_argv_secrets(argv)
    for secret in (KEY, PASSWORD, "TOK-123456"):
        assert secret not in " ".join(hidden) and secret in env.values()
    assert hidden[0] == "play" and "127.0.0.1:9" in hidden[2]
    assert reveal_argv_secrets(hidden, env) == argv
    assert reveal_argv_secrets(["x@@TRIANGULATE_SECRET_7@@"], {}) == ["x@@TRIANGULATE_SECRET_7@@"]  # no variable: left as is
    assert redact_secret_keys({"auth_token": "TOK-123456", "temperature": 0}) == {"auth_token": "<redacted>", "temperature": 0}
