"""Episodes and samples as conversations: the data model behind the episode viewer (pure functions).

Every record of ``triangulate play`` (``episodes_<task>.jsonl``, :mod:`multiturn.engine.results`) and every
lm-eval ``--log_samples`` record (``samples_<task>_<date>.jsonl``) becomes one :class:`Episode`: a
list of :class:`Turn` (who spoke, what, and our parsed reading of it), an outcome, a main score and
the scores with a sentence saying why. One normaliser per record shape, chosen by the shape:

- trial lists with ``stimulus``/``target`` (n-back), with ``rule`` (WCST, LNT);
- clembench ``interactions`` (GM / Player 1 / Player 2 turns with typed actions; Wordle feedback grid);
- ``role``/``content`` transcripts (interactive Connections and GlobalGroup with their ``events``,
  SPLAT with its judge ``rounds``);
- lm-eval samples (prompt, response, the parsed groups, the gold groups, per-game metrics).

Nothing here writes HTML: :mod:`triangulation.viewer.pages` escapes and renders these objects.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

#: roles the viewer lays out in their own column / colour
ROLES = ("gm", "player", "player_b", "judge")
ROLE_LABELS = {"gm": "game master", "player": "player", "player_b": "second player", "judge": "judge"}
#: the per-episode score shown in the list: the first of these keys an episode reports
MAIN_SCORE_KEYS = ("main_score", "overall", "group_f1", "weighted_clustering", "accuracy", "solved", "groups_found", "f1")
#: clembench instance fields shown above an episode (the stimuli: target word, grids, ...)
CLEM_FACTS = ("target_word", "target_word_clue", "related_word", "target_grid", "player_1_target_grid", "target_grid_name", "experiment")
WORDLE_FEEDBACK = re.compile(r"(\w)<(green|yellow|red)>")


@dataclass
class Turn:
    role: str  # one of ROLES
    text: str
    to: str = ""  # addressee shown next to the role (e.g. "Player 2")
    notes: list[str] = field(default_factory=list)  # our parsed reading of this message
    verdict: bool | None = None  # True right, False wrong, None not judged
    grid: list[tuple[str, str]] = field(default_factory=list)  # Wordle feedback: (letter, colour)


@dataclass
class Episode:
    id: str
    model: str
    task: str
    failed: bool
    outcome: str
    score: float
    turns: list[Turn]
    scores: dict[str, Any]
    why: str
    error: str = ""
    facts: list[tuple[str, str]] = field(default_factory=list)  # stimuli / gold shown above the turns
    facts_title: str = ""  # what the facts are ("the solution (hidden from the player)", ...)


def number(value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        return math.nan
    return out


def main_score(scores: Mapping[str, Any]) -> float:
    for key in MAIN_SCORE_KEYS:
        if key in scores:
            return number(scores[key])
    return math.nan


def outcome_of(record: Mapping[str, Any], scores: Mapping[str, Any]) -> str:
    """One word or two: failed / aborted / success / lost / solved / not solved / the accuracy."""
    if record.get("failed"):
        return "failed"
    if number(scores.get("aborted")) == 1:
        return "aborted"
    if number(scores.get("success")) == 1:
        return "success"
    if number(scores.get("lose")) == 1:
        return "lost"
    if "hit" in record:
        return "solved" if record.get("hit") else "not solved"
    if "solved" in scores:
        return "solved" if number(scores["solved"]) == 1 else "not solved"
    if "accuracy" in scores:
        return f"accuracy {number(scores['accuracy']):.2f}"
    return "finished"


def count(value: Any) -> str:
    """A count as an integer ("4", not "4.0"); "?" when missing."""
    v = number(value)
    return "?" if math.isnan(v) else f"{v:g}"


def short(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


# --- play records ----------------------------------------------------------------------------


def from_record(record: Mapping[str, Any], model: str) -> Episode:
    """A ``triangulate play`` JSONL record as an :class:`Episode` (any family; unknown shapes as raw turns)."""
    scores = dict(record.get("scores") or {})
    transcript = list(record.get("transcript") or [])
    instance = dict(record.get("instance") or {})
    first = transcript[0] if transcript and isinstance(transcript[0], Mapping) else {}
    facts: list[tuple[str, str]] = []
    if "interactions" in record:
        turns, why, facts = clem_turns(record, scores)
    elif "stimulus" in first and "target" in first:
        turns, why, facts = nback_turns(transcript, instance)
    elif "rule" in first and "trial" in first:
        turns, why, facts = switching_turns(transcript, instance, record)
    elif "role" in first and "content" in first:
        turns, why, facts = chat_turns(transcript, record, scores)
    else:
        turns = [Turn("gm", short(item)) for item in transcript]
        why = ""
    titles = {
        "interactions": "players and instance",
        "stimulus": "the block",
        "rule": "the run",
        "events": "the solution (hidden from the player)",
        "rounds": "the puzzle (the judge sees the answer)",
    }
    key = (
        "interactions"
        if "interactions" in record
        else "stimulus"
        if "stimulus" in first
        else "rule"
        if "rule" in first
        else "events"
        if "events" in record
        else "rounds"
    )
    if record.get("failed"):
        why = f"Not scored: the backend failed ({record.get('error') or 'no error text'}); the episode is played again on resume."
    return Episode(
        id=str(record.get("id", "")),
        model=model,
        task=str(record.get("task", "")),
        failed=bool(record.get("failed")),
        outcome=outcome_of(record, scores),
        score=main_score(scores),
        turns=turns,
        scores=scores,
        why=why,
        error=str(record.get("error") or ""),
        facts=facts,
        facts_title=titles.get(key, ""),
    )


def nback_turns(transcript: list[Mapping[str, Any]], instance: Mapping[str, Any]):
    turns: list[Turn] = []
    if instance.get("system_prompt"):
        turns.append(Turn("gm", str(instance["system_prompt"]), to="system"))
    messages = list(instance.get("messages") or [])
    for t in transcript:
        i = int(t.get("trial", len(turns)))
        shown = messages[i] if i < len(messages) else t.get("stimulus")
        turns.append(Turn("gm", str(shown), notes=[f"trial {i + 1}: letter {t.get('stimulus')}, expected {t.get('target')}"]))
        parsed = t.get("parsed")
        note = f"read as {parsed!r}" if parsed is not None else "unparsed (neither m nor -)"
        turns.append(Turn("player", str(t.get("response", "")), notes=[note], verdict=bool(t.get("correct"))))
    right = sum(bool(t.get("correct")) for t in transcript)
    targets = [t.get("target") for t in transcript]
    hits = sum(1 for t in transcript if t.get("target") == "m" and t.get("parsed") == "m")
    fas = sum(1 for t in transcript if t.get("target") != "m" and t.get("parsed") == "m")
    why = (
        f"{right} of {len(transcript)} trials answered as expected (m when the letter equals the one "
        f"{instance.get('n', 'n')} back, - otherwise); hits {hits} of {targets.count('m')} targets, "
        f"false alarms {fas} of {len(targets) - targets.count('m')} non-targets."
    )
    facts = [
        ("stimuli", str(instance.get("stimuli", ""))),
        ("targets", str(instance.get("targets", ""))),
        ("replies", "".join(str(t.get("parsed") or "?") for t in transcript)),
    ]
    return turns, why, facts


def card_text(card: Any) -> str:
    return " ".join(str(x) for x in card) if isinstance(card, (list, tuple)) else str(card)


def switching_turns(transcript: list[Mapping[str, Any]], instance: Mapping[str, Any], record: Mapping[str, Any]):
    turns: list[Turn] = []
    trials = list(instance.get("trials") or [])
    for t in transcript:
        i = int(t.get("trial", 0))
        trial = trials[i] if i < len(trials) else {}
        if "card" in trial:
            options = "; ".join(f"{k + 1}) {card_text(o)}" for k, o in enumerate(trial.get("options", [])))
            shown = f"card: {card_text(trial['card'])}  options: {options}"
        else:
            shown = f"sequence: {trial.get('sequence', '?')}"
        turns.append(Turn("gm", shown, notes=[f"trial {i + 1}, hidden rule: {t.get('rule')}"]))
        parsed = t.get("parsed")
        notes = [f"read as {parsed!r}" if parsed is not None else "unparsed"]
        options = trial.get("options") or []
        if isinstance(parsed, int) and 1 <= parsed <= len(options):
            notes[0] = f"chose option {parsed}: {card_text(options[parsed - 1])}"
        if t.get("perseverative"):
            notes.append("perseverative error (matches the previous rule)")
        turns.append(Turn("player", str(t.get("response", "")), notes=notes, verdict=bool(t.get("correct"))))
        if t.get("feedback"):
            turns.append(Turn("gm", str(t["feedback"])))
        if t.get("feedback_reply"):
            turns.append(Turn("player", str(t["feedback_reply"]), notes=["reply to the feedback (not scored)"]))
    right = sum(bool(t.get("correct")) for t in transcript)
    why = f"{right} of {len(transcript)} choices followed the hidden rule; the rule switched {record.get('switches', 0)} times (after a run of correct answers)."
    return turns, why, [("first rule", str(instance.get("first_rule", "")))]


def clem_turns(record: Mapping[str, Any], scores: Mapping[str, Any]):
    """clembench interactions: GM <-> Player 1 / Player 2 messages; GM-internal actions become notes."""
    roles = {"GM": "gm", "Player 1": "player", "Player_1": "player", "Player 2": "player_b", "Player_2": "player_b"}
    turns: list[Turn] = []
    interactions = record.get("interactions") or {}
    for round_ in interactions.get("turns", []):
        for event in round_:
            src, dst = str(event.get("from", "")), str(event.get("to", ""))
            action = event.get("action") or {}
            kind, content = str(action.get("type", "")), action.get("content", "")
            text = short(content)
            if src == "GM" and dst == "GM":
                if turns:
                    turns[-1].notes.append(f"{kind}: {text}")
                else:
                    turns.append(Turn("gm", text, to=kind))
                continue
            turn = Turn(roles.get(src, "gm"), text, to=dst)
            if src == "GM" and "guess_feedback" in text and len(text) < 400:  # feedback, not the rules' example
                turn.grid = WORDLE_FEEDBACK.findall(text)[-5:]
            turns.append(turn)
    if number(scores.get("aborted")) == 1:
        why = "Aborted: a reply broke the game's format rules, so the main score is undefined (NaN; clemscore counts the episode as not played)."
    elif number(scores.get("success")) == 1:
        why = f"Success: the game's goal was reached; main score {number(scores.get('main_score')):.3g}."
    else:
        why = f"Lost: the game ended without reaching its goal; main score {number(scores.get('main_score')):.3g}."
    players = interactions.get("players") or {}
    facts = [(str(k), str(v)) for k, v in players.items()]
    instance = record.get("instance") or {}
    for key in CLEM_FACTS:
        if key in instance:
            facts.append((key, str(instance[key])))
    return turns, why, facts


def chat_turns(transcript: list[Mapping[str, Any]], record: Mapping[str, Any], scores: Mapping[str, Any]):
    """role/content transcripts: interactive Connections / GlobalGroup (events) and SPLAT (rounds)."""
    roles = {"user": "gm", "game": "gm", "player": "player", "player_b": "player_b", "judge": "judge", "system": "gm"}
    events = list(record.get("events") or [])
    rounds = list(record.get("rounds") or [])
    turns: list[Turn] = []
    n_player = n_judge = 0
    for item in transcript:
        role = roles.get(str(item.get("role")), "gm")
        turn = Turn(role, str(item.get("content", "")), to=str(item.get("to") or item.get("phase") or ""))
        if role == "player" and events:
            if n_player < len(events):
                ev = events[n_player]
                guess = ", ".join(ev.get("guess") or []) or "no guess"
                turn.notes.append(f"guess: [{guess}] -> {ev.get('result')}" + (f" ({ev['reason']})" if ev.get("reason") else ""))
                turn.verdict = ev.get("result") == "correct"
            n_player += 1
        if role == "judge" and rounds and item.get("phase") is None:
            if n_judge < len(rounds):
                turn.notes.append(f"judge's answer read as: {rounds[n_judge].get('judge_label')}")
            n_judge += 1
        turns.append(turn)
    facts: list[tuple[str, str]] = []
    instance = record.get("instance") or {}
    if events or "found" in record:
        facts = [(str(g.get("topic", "")), ", ".join(map(str, g.get("words", [])))) for g in instance.get("groups", [])]
        why = (
            f"Found {', '.join(map(str, record.get('found') or [])) or 'no group'}; {count(scores.get('mistakes'))} mistakes, "
            f"{count(scores.get('invalid_replies'))} invalid replies; solved = every group found before the 4th mistake."
        )
    else:
        for key in ("title", "story", "answer", "level_label"):
            if key in instance:
                facts.append((key, str(instance[key])))
        n = len(rounds)
        why = (
            f"The judge accepted the answer in round {n}." if record.get("hit") else f"No answer accepted in {n} rounds."
        ) + " Accuracy = solved; rounds = questions used."
    return turns, why, facts


# --- lm-eval samples ----------------------------------------------------------------------------


def sample_prompt(record: Mapping[str, Any]) -> str:
    """The prompt lm-eval sent: ``arguments`` as ``{"gen_args_0": {"arg_0": ...}}`` (0.4.x) or a list; a chat
    history serialised as JSON (API backends, the chance player) is shown as its messages' text."""
    args = record.get("arguments")
    text = ""
    if isinstance(args, Mapping):
        first = next(iter(args.values()), {})
        if isinstance(first, Mapping):
            text = str(first.get("arg_0", ""))
    elif isinstance(args, list) and args:
        inner = args[0]
        text = str(inner[0] if isinstance(inner, list) and inner else inner)
    if text.startswith("[{"):
        try:
            messages = json.loads(text)
        except json.JSONDecodeError:
            return text
        if isinstance(messages, list) and all(isinstance(m, Mapping) and "content" in m for m in messages):
            return "\n\n".join(f"[{m.get('role', 'user')}] {m['content']}" for m in messages)
    return text


def from_sample(record: Mapping[str, Any], model: str, task: str) -> Episode:
    from custom_metrics.parsing import parse_groups
    from triangulation.runs.samples import response_text

    doc = dict(record.get("doc") or {})
    response = response_text(record)
    metric_names = list(record.get("metrics") or [])
    scores = {m: record.get(m) for m in metric_names if m in record}
    notes: list[str] = []
    facts: list[tuple[str, str]] = []
    gold = doc.get("groups")
    pool = doc.get("words")
    if isinstance(pool, list) and isinstance(gold, list):
        n_groups = int(doc.get("n_groups") or len(gold))
        for group in parse_groups(response, [str(w) for w in pool], n_groups=n_groups):
            notes.append(f"parsed {group.topic or group.label or 'group'}: {', '.join(group.words)}")
        if not notes:
            notes.append("no group could be parsed from the reply")
        facts = [(str(g.get("topic", "")), ", ".join(map(str, g.get("words", [])))) for g in gold if isinstance(g, Mapping)]
    elif record.get("target") not in (None, ""):
        facts = [("gold", short(record.get("target")))]
    turns = [Turn("gm", sample_prompt(record), to="prompt"), Turn("player", response, notes=notes)]
    shown = ", ".join(f"{k} {number(v):.3g}" for k, v in scores.items())
    why = f"lm-eval scored this sample with the task's process_results: {shown or 'no metric recorded'}."
    return Episode(
        id=str(record.get("doc_id", "")),
        model=model,
        task=task,
        failed=False,
        outcome=outcome_of({}, scores),
        score=main_score(scores),
        turns=turns,
        scores=scores,
        why=why,
        facts=facts,
        facts_title="the gold groups" if isinstance(gold, list) else "",
    )
