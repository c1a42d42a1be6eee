"""A report over three scripted models' results renders, with every analysis, and escapes result text."""

from __future__ import annotations

import json
import math
import re

import pandas as pd

from tests.triangulation.test_report_fakes import DATE, gg_doc, oracle, run_report, three_model_results, write_lm_eval_run

MODELS = {"scripted/oracle", "scripted/chunker", "scripted-half"}


def test_three_model_report(tmp_path, monkeypatch):
    monkeypatch.delenv("TRIANGULATE_FASTTEXT_DIR", raising=False)  # no reasoning judge: no fastText proxy either
    three_model_results(tmp_path / "runs")
    out = tmp_path / "report"
    assert run_report([str(tmp_path / "runs" / "lm_eval"), str(tmp_path / "runs" / "play"), "--out", str(out)]) == 0

    scores = pd.read_csv(out / "scores.csv", index_col=0)
    assert set(scores.index) == MODELS  # from config.model_args, not from the folder names
    assert scores.loc["scripted/oracle", "globalgroup_zh"] == 1.0
    assert scores.loc["scripted/chunker", "globalgroup_zh"] < scores.loc["scripted-half", "globalgroup_zh"] < 1.0
    assert math.isclose(scores.loc["scripted/oracle", "ifeval"], (0.8 + 0.86) / 2)  # IFEval: mean of the two strict accuracies
    assert {"taboo", "wordle", "referencegame", "clembench", "nback_verbal_3_triangulating", "wcst_triangulating", "connections"} <= set(
        scores.columns
    )
    assert math.isclose(scores.loc["scripted/chunker", "taboo"], 50 / 100 * 20)  # clemscore of the game

    tau = pd.read_csv(out / "kendall_tau.csv", index_col=0)
    n = pd.read_csv(out / "kendall_n.csv", index_col=0)
    assert list(tau.index) == list(tau.columns) == list(scores.columns)
    assert (n.to_numpy() == 3).all()
    assert math.isclose(tau.loc["mmlu", "winogrande"], 1.0)  # same model order on both

    abil = pd.read_csv(out / "abilities_static_vs_interactive.csv")
    assert set(abil["ability"]) == {"working_memory", "cognitive_flexibility", "logical_reasoning", "commonsense_reasoning"}
    assert (abil["n_static"] == 3).all() and (abil["n_interactive"] == 3).all()

    ratios = pd.read_csv(out / "discriminative_ratios.csv", index_col=0)
    assert ratios.shape[1] == 3  # every pair of the three models

    f1 = pd.read_csv(out / "globalgroup_f1.csv", index_col=0)
    assert set(f1.columns) == {"en", "zh", "zh_en", "nyt_shuf"} and set(f1.index) == MODELS
    deltas = pd.read_csv(out / "globalgroup_native_vs_english.csv", index_col=0)
    assert list(deltas.columns) == ["zh - zh_en"]
    tags = pd.read_csv(out / "globalgroup_tags.csv", index_col=0)
    assert set(tags.index) == {"Everyday", "Pop culture", "Linguistic"}
    assert (tags["scripted/oracle"] == 1.0).all()
    cultural = pd.read_csv(out / "globalgroup_cultural.csv", index_col=0)
    assert list(cultural.columns) == ["zh", "zh_en", "en", "Mean"] and set(cultural.index) == MODELS  # Tables 10 / 3
    assert (cultural.loc["scripted/oracle"] == 0.0).all()
    colours = pd.read_csv(out / "globalgroup_nyt_colours.csv", index_col=0)
    assert list(colours.index) == ["yellow", "green", "blue", "purple"]
    # half_oracle gets the first two gold groups (yellow, green) exactly and scrambles the rest
    assert colours.loc["yellow", "scripted-half"] == 1.0 > colours.loc["purple", "scripted-half"]
    pca = pd.read_csv(out / "globalgroup_pca.csv", index_col=0)
    assert set(pca.index) == MODELS and pca["cluster"].nunique() == 2
    ari = pd.read_csv(out / "globalgroup_by_ari.csv", index_col=0)
    assert list(ari.index) == ["(0.0, 0.5]", "(0.5, 1.0]"]  # Table 4's fixed ranges: ARI 0.05, 0.35 | 0.65

    dist = pd.read_csv(out / "connections_score_distribution.csv", index_col=0)
    assert dist.loc["scripted/oracle", "4"] == 3 and dist.sum(axis=1).eq(3).all()
    # no reasoning judge here (no --judge_model, no fastText vectors): clustering-only shares, not Figure 7
    assert not (out / "connections_knowledge.csv").exists()
    know = pd.read_csv(out / "connections_knowledge_clustered_only.csv", index_col=0)
    assert (know["scripted/oracle"] == 1.0).all()
    assert know.loc["Word form", "scripted-half"] == 0.0 and know.loc["Encyclopedic", "scripted-half"] == 1.0

    played = pd.read_csv(out / "clembench_runs_played.csv", index_col=0)
    assert played.loc["scripted/chunker", "taboo"] == 50

    html = (out / "report.html").read_text(encoding="utf-8")
    pngs = sorted(p.name for p in out.glob("*.png"))
    assert {
        "kendall_heatmap.png",
        "abilities_static_vs_interactive.png",
        "globalgroup_f1.png",
        "globalgroup_pca.png",
        "connections_score_distribution.png",
        "clembench_clemscore.png",
        "discriminative_0.png",
    } <= set(pngs)
    assert html.count("data:image/png;base64,") == len(pngs)  # every figure embedded, nothing linked
    assert not re.search(r"""(src|href)=['"](?!data:|#|episodes/)""", html)  # opens offline: no external resources
    links = re.findall(r"""href='(episodes/[^']+)'""", html)  # benchmark names link to the episode viewer
    assert links and all((out / link.partition("#")[0]).is_file() for link in links)  # a group's: the index, at its anchor
    assert html.lower().count("<script") == 1  # only the leaderboard's sort script


def test_strings_from_results_are_escaped(tmp_path):
    evil = "<script>alert(1)</script>"
    doc = gg_doc("zh", 0)
    doc["groups"][0]["topic"] = evil
    doc["groups"][0]["tags"] = [evil]
    respond = lambda d: oracle(d) + "\n" + evil  # noqa: E731
    path = write_lm_eval_run(tmp_path / "runs", {"pretrained": f"org/{evil}"}, respond, {evil: {"acc": 0.5}}, folder="x")
    data = json.loads(path.read_text())
    samples = path.parent / f"samples_globalgroup_zh_{DATE}.jsonl"
    lines = samples.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["doc"] = doc
    lines[0] = json.dumps(first, ensure_ascii=False)
    samples.write_text("\n".join(lines) + "\n", encoding="utf-8")
    data["results"]["globalgroup_zh"]["alias"] = evil
    path.write_text(json.dumps(data))
    ext = tmp_path / "ext.csv"
    pd.DataFrame({"model": [f"org/{evil}", "other"], evil: [1.0, 2.0]}).to_csv(ext, index=False)

    out = tmp_path / "report"
    assert run_report([str(tmp_path / "runs"), "--external", f"lab={ext}", "--out", str(out)]) == 0
    html = (out / "report.html").read_text(encoding="utf-8")
    assert html.lower().count("<script") == 1 and "alert(1)</script>" not in html  # only our sort script
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html  # shown, escaped
    page = (out / "episodes" / "globalgroup_zh.html").read_text(encoding="utf-8")  # the model's reply in the viewer
    assert "alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    scores = pd.read_csv(out / "scores.csv", index_col=0)
    assert f"org/{evil}" in scores.index  # the data files keep the real names


def test_user_errors_are_one_line(tmp_path, capsys):
    assert run_report(["--out", str(tmp_path / "o")]) == 2
    assert run_report([str(tmp_path / "missing"), "--out", str(tmp_path / "o")]) == 2
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "results_x.json").write_text("{not json")
    assert run_report([str(bad), "--out", str(tmp_path / "o")]) == 2
    (tmp_path / "t.csv").write_text("model\nonly-a-name\n")
    assert run_report(["--external", str(tmp_path / "t.csv"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 4 and all(line.startswith("triangulate: error: ") for line in err)
    assert "results_x.json" in err[2] and "Traceback" not in "".join(err)
