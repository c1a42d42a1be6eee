"""`triangulate score RUN_DIR`: play runs re-scored from their stored replies, lm-eval runs from their samples,
judge turns re-judged by another model; no model call for the re-scoring itself (scripted backends)."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from models.loading import register_lm_class
from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.engine.record import dumps, read_episodes
from multiturn.engine.rescore import judge_agreement, replay
from multiturn.engine.runner import run_tasks
from multiturn.game import Game, Request, TaskSpec
from tests.support.built_data import use_built_data
from tests.support.engine_helpers import CountGame, CountTask, echo_last, register_test_task_and_model
from tests.support.play_settings import play_settings
from triangulation.cli.main import main


def _play(tmp_path: Path, task: str, lm, **kw) -> Path:
    judge = kw.pop("judge", lm)
    payload, path = run_tasks(play_settings([task], output_dir=tmp_path, **kw), {"player": lm, "judge": judge}, progress=False)
    return path


def _sloppy(messages: list[dict]) -> str:
    """Right on odd numbers; on even ones the number with a trailing period ("2.")."""
    target = messages[-1]["content"]
    return target if int(target) % 2 else f"{target}."


def test_play_run_rescored_with_changed_code_prints_changes_and_keeps_the_old_results(tmp_path, capsys, monkeypatch):
    register_test_task_and_model()
    old_path = _play(tmp_path, "count_test", ScriptedLM(_sloppy))
    old = json.loads(old_path.read_text())
    assert old["results"]["count_test"]["accuracy,none"] < 1.0

    time.sleep(0.01)
    assert main(["score", str(tmp_path)]) == 0  # same code: same numbers
    out = capsys.readouterr().out
    assert "no metric changed: no new results file written" in out and "0 metric value(s) changed" in out
    assert list((tmp_path / "m").glob("results_*.json")) == [old_path]  # a score that changes nothing writes nothing

    # "the current code" parses replies more leniently: a trailing period no longer makes a reply wrong
    def lenient(self, reply: str) -> None:
        original_on_reply(self, reply.strip().rstrip("."))

    original_on_reply = CountGame.on_reply
    monkeypatch.setattr(CountGame, "on_reply", lenient)
    monkeypatch.setattr("triangulation.cli.score.load_lm", lambda *a, **k: pytest.fail("score must not load a model"))
    assert main(["score", str(tmp_path), "--tasks", "count_test"]) == 0
    out = capsys.readouterr().out
    before = old["results"]["count_test"]["accuracy,none"]
    assert f"count_test  accuracy,none: {before:.4f} -> 1.0000" in out
    assert "count_test: 4 episode(s) scored differently" in out  # the episodes of 3 and 5 turns say a "2."
    files = sorted((tmp_path / "m").glob("results_*.json"), key=lambda p: p.stat().st_mtime)
    assert len(files) == 2 and files[0] == old_path and json.loads(old_path.read_text()) == old  # old ones kept, unchanged
    new = json.loads(files[-1].read_text())
    assert new["results"]["count_test"]["accuracy,none"] == 1.0 and new["n-samples"] == old["n-samples"]
    assert new["config"]["rescored_from"] == old["date"]  # the newest results before it


def test_replay_that_the_current_code_plays_differently_keeps_the_stored_scores(tmp_path, capsys):
    register_test_task_and_model()
    _play(tmp_path, "count_test", ScriptedLM(echo_last))
    jsonl = tmp_path / "m" / "episodes_count_test.jsonl"
    records = read_episodes(jsonl)
    records[0]["calls"] = records[0]["calls"][:-1]  # one stored reply short of the game
    jsonl.write_text("".join(dumps(r) + "\n" for r in records))
    assert main(["score", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "1 kept their stored scores (replay diverged: the game wants more than the" in out


def test_replay_recomputes_the_scores_from_the_calls_alone():
    task = CountTask(n_episodes=1, lengths=(3,))
    instance = task.instances(0)[0]
    record = {
        "id": instance["id"],
        "instance": instance,
        "seed": 0,
        "scores": {"accuracy": 0.0},
        "calls": [{"role": "player", "reply": r} for r in ("1", "x", "3")],
    }
    assert replay(task, record).record["scores"] == {"accuracy": pytest.approx(2 / 3)}


class JudgedGame(Game):
    """Player says a number; a judge says yes or no to it; one round."""

    def __init__(self, instance):
        super().__init__(instance)
        self.stage = "player"
        self.verdict = ""

    def next_request(self):
        if self.stage == "player":
            return Request([{"role": "user", "content": "say a number"}])
        if self.stage == "judge":
            return Request([{"role": "user", "content": f"is {self.said} even? answer yes or no"}], role="judge")
        return None

    def on_reply(self, reply):
        if self.stage == "player":
            self.said, self.stage = reply, "judge"
        else:
            self.verdict, self.stage = reply, "over"
        self.transcript.append({"reply": reply})

    @property
    def done(self):
        return self.stage == "over"

    def scores(self):
        return {"judged_yes": float("yes" in self.verdict.lower())}


class YesJudge(ScriptedLM):
    """A judge that always says yes."""

    def __init__(self, **_):
        super().__init__(lambda m: "yes", name="scripted-yes-judge")

    @classmethod
    def create_from_arg_obj(cls, arg_dict, additional_config=None):
        return cls()


class JudgedTask(TaskSpec):
    name = "judged_test"
    roles = ("player", "judge")

    def instances(self, seed):
        return [{"id": f"j{i}", "n": i} for i in range(4)]

    def make_game(self, instance: Mapping[str, Any], seed: int):
        return JudgedGame(instance)

    def judge_label(self, reply: str) -> str | None:
        """How this task reads a judge's verdict (what the agreement report compares)."""
        word = reply.strip().rstrip(".").lower()
        return word if word in ("yes", "no") else None


def test_judge_model_re_judges_the_judge_turns_and_agreement_is_reported(tmp_path, capsys):
    if "judged_test" not in registry.task_names():
        registry.register("judged_test")(JudgedTask)
    numbers = iter(["2", "3", "4", "5"])
    player = ScriptedLM(lambda m: next(numbers))
    old_judge = ScriptedLM(lambda m: "Yes." if int(m[-1]["content"].split()[1]) % 2 == 0 else "No.")
    _play(tmp_path, "judged_test", player, judge=old_judge)
    register_lm_class("scripted-yes-judge", YesJudge)
    assert main(["score", str(tmp_path), "--judge_model", "scripted-yes-judge"]) == 0
    out = capsys.readouterr().out
    # stored verdicts yes, no, yes, no against yes x4: agreement 0.5, kappa 0 (one judge never varies)
    assert "judged_test: judges agree on 0.500 of 4 verdicts (Cohen's kappa 0.000" in out
    assert "no metric changed" in out  # the stored judge still drives the scores


def test_judge_agreement_counts_and_kappa():
    label = {"y": "yes", "n": "no"}.get
    result = judge_agreement([("y", "y"), ("n", "n"), ("y", "n"), ("n", "n"), ("?", "y")], label)
    assert result["n"] == 5 and result["n_parsed"] == 4 and result["agreement"] == 0.75
    # p_o = .75, p_e = (.5*.25)+(.5*.75) = .5 -> kappa .5
    assert result["cohen_kappa"] == pytest.approx(0.5)


def test_lm_eval_samples_are_rescored_with_the_current_task_code(upstream, monkeypatch, tmp_path, capsys):
    from triangulation.runs.rescore_samples import load_task

    use_built_data(upstream, monkeypatch)
    task = load_task("globalgroup_zh")
    docs = list(task.test_docs() if task.has_test_docs() else task.validation_docs())[:3]
    answers = [task.doc_to_target(docs[0]), "nonsense", task.doc_to_target(docs[2])]
    expected = [task.process_results(doc, [ans]) for doc, ans in zip(docs, answers)]
    folder = tmp_path / "run" / "some__model"
    folder.mkdir(parents=True)
    stamp = "2026-11-25T00-00-00.000001"
    with (folder / f"samples_globalgroup_zh_{stamp}.jsonl").open("w") as fh:
        for i, (doc, ans) in enumerate(zip(docs, answers)):
            fh.write(
                json.dumps({"doc_id": i, "doc": doc, "resps": [[ans]], "filtered_resps": [ans], "filter": "none"}, ensure_ascii=False)
                + "\n"
            )
    metric = next(iter(expected[0]))
    stale = {
        "results": {"globalgroup_zh": {"alias": "globalgroup_zh", f"{metric},none": -1.0}},
        "n-samples": {"globalgroup_zh": {"original": 100, "effective": 3}},
        "config": {"model": "x"},
        "date": 1.0,
    }
    (folder / f"results_{stamp}.json").write_text(json.dumps(stale))
    assert main(["score", str(tmp_path / "run")]) == 0
    out = capsys.readouterr().out
    mean = sum(e[metric] for e in expected) / 3
    assert f"globalgroup_zh  {metric},none: -1.0000 -> {mean:.4f}" in out
    [new] = [p for p in folder.glob("results_*.json") if stamp not in p.name]
    payload = json.loads(new.read_text())
    entry = payload["results"]["globalgroup_zh"]
    for key in expected[0]:
        values = [e[key] for e in expected]
        agg = task.aggregation()[key]
        assert entry[f"{key},none"] == pytest.approx(agg(values), nan_ok=True)
    assert payload["n-samples"]["globalgroup_zh"] == {"original": 100, "effective": 3} and entry["sample_len"] == 3


def test_score_on_a_folder_without_runs_is_a_one_line_error(tmp_path, capsys):
    assert main(["score", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no results with episodes_*.jsonl or samples_*.jsonl" in err


@pytest.mark.slow
def test_score_on_real_eval_and_play_runs_of_one_folder_changes_nothing(upstream, built_data, tmp_path, capsys):
    """Issue 43 item 1, on what the real commands write (the chance player: no model to load): lm_pragmatics'
    logged multiple-choice answers (lm-eval logs them as strings) re-score to the stored values; two play runs
    of one folder with their own settings are each compared with their own results file (was: None -> 1.0);
    a second score changes nothing either; `--tasks lm_pragmatics` (the group) re-scores its members; a name
    nothing is stored under is one line."""
    out = str(tmp_path / "out")
    assert main(["eval", "--model", "random", "--tasks", "lm_pragmatics", "--limit", "1", "--log_samples", "--output_path", out]) == 0
    assert main(["play", "--model", "random", "--tasks", "nback_verbal_1", "--limit", "1", "--output_path", out]) == 0
    assert main(["play", "--model", "random", "--tasks", "taboo", "--limit", "1", "--output_path", out]) == 0
    before = sorted(p.name for p in (tmp_path / "out").rglob("results_*.json"))
    capsys.readouterr()
    for _ in range(2):
        assert main(["score", out]) == 0
        text = capsys.readouterr().out
        assert "0 metric value(s) changed" in text and "None ->" not in text, text[-2000:]
    assert sorted(p.name for p in (tmp_path / "out").rglob("results_*.json")) == before
    assert main(["score", out, "--tasks", "lm_pragmatics"]) == 0
    assert "no metric changed" in capsys.readouterr().out
    assert main(["score", out, "--tasks", "lm_pragmaticz"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "lm_pragmaticz" in err and "... " in err
