"""NATURAL PLAN scoring (Zheng et al. 2024; seed 003 App. E.2.1): the benchmark's rule-based parsers,
reimplemented from their description.

Seed 003, App. E.2.1: "In NATURAL PLAN, the original work defined a rule-based procedure to parse
specific data from the generated plan (e.g., dates). We reuse their parsing procedure and verify whether
the expected elements are all present in the parsed plan." Zheng et al. (2024, Sec. 3) score every task by
exact match against the gold plan; the rules, per task:

* Trip planning (:func:`parse_trip_plan`, :func:`trip_correct`): each answer line holding a day span
  ``"<d>-<d>"`` is a stay, each line ``"... Day <d> ... from <A> to <B>"`` a flight. The visited cities are
  the first flight's origin followed by every flight's destination; stay i lasts from flight day i to
  flight day i+1 inclusive (the plan starts on day 1 and ends on the last day of the last span), so a
  flight day counts for both cities. Reading stops after a span that ends on the trip's total length
  (when the text states "European cities for <n> days"). A plan without spans or flights is empty.
  Correct iff the first stays equal the gold cities and durations in order, all of them (extra stays
  after the gold ones are not looked at).
* Calendar scheduling (:func:`parse_calendar_slot`, :func:`calendar_correct`): the first
  ``"<Day>, HH:MM - HH:MM"`` span of the answer and of the gold plan; correct iff day, start and end
  are equal (no span in the answer: wrong).
* Meeting planning (:func:`meetings_kept`, :func:`meeting_correct`): the text after ``"SOLUTION:"`` is
  split at full stops into steps and walked from the start location and time: "You start ..." is
  skipped, "You travel to X ..." adds the travel minutes of the distance matrix, "You wait until T"
  must move the clock forward, "You meet P ..." needs P at the current location, not met before, the
  meeting's minimum minutes fitting inside P's availability, and advances the clock by those minutes.
  The first step that breaks a rule (or has another form) ends the walk. Correct iff the number of
  people met equals that of the gold plan walked the same way.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

_SPAN = re.compile(r"\d+-\d+")
_FLIGHT = re.compile(r".*Day (\d+).*from (\w+) to (\w+)")
_TOTAL = re.compile(r"European cities for (\d+) days")
_SLOT = re.compile(r"[A-Za-z]+, [0-9]+:[0-9]+ - [0-9]+:[0-9]+")


def parse_trip_plan(response: str) -> list[tuple[str, int]]:
    """``[(city, days), ...]`` in visiting order, or ``[]`` when no spans or no flights are found."""
    spans: list[tuple[int, int]] = []
    flights: list[tuple[int, str, str]] = []
    total: int | None = None
    for line in response.split("\n"):
        stated = _TOTAL.findall(line)
        if stated:
            total = int(stated[0])
        span = _SPAN.findall(line)
        if span:
            first, last = (int(x) for x in span[0].split("-"))
            spans.append((first, last))
            if last == total:
                break
        flight = _FLIGHT.findall(line)
        if flight:
            day, origin, destination = flight[0]
            flights.append((int(day), origin, destination))
    if not spans or not flights:
        return []
    cities = [flights[0][1]] + [destination for _, _, destination in flights]
    bounds = [1] + [day for day, _, _ in flights] + [spans[-1][1]]
    return [(city, bounds[i + 1] - bounds[i] + 1) for i, city in enumerate(cities)]


def trip_correct(response: str, cities: str, durations: str) -> float:
    """1.0 iff the parsed plan starts with exactly the gold stays (``cities`` ``"A**B"``, ``durations`` ``"2**3"``)."""
    gold_cities = [c for c in cities.split("**") if c]
    gold_days = [int(d) for d in durations.split("**") if d]
    plan = parse_trip_plan(response)
    if not gold_cities or len(plan) < len(gold_cities):
        return 0.0
    return float(all(plan[i] == (gold_cities[i], gold_days[i]) for i in range(len(gold_cities))))


def _hours(clock: str) -> float:
    hours, minutes = clock.split(":")
    return int(hours) + int(minutes) / 60


def parse_calendar_slot(text: str) -> tuple[str, float, float] | None:
    """``(day, start hour, end hour)`` of the first ``"Monday, 14:30 - 15:30"`` span, or None."""
    match = _SLOT.search(text)
    if match is None:
        return None
    day, times = match.group(0).split(", ", 1)
    start, end = (part.strip() for part in times.split(" - "))
    return day, _hours(start), _hours(end)


def calendar_correct(response: str, golden_plan: str) -> float:
    """1.0 iff the answer's first slot equals the gold plan's first slot (day, start, end)."""
    predicted = parse_calendar_slot(response)
    return float(predicted is not None and predicted == parse_calendar_slot(golden_plan))


@dataclass(frozen=True)
class Person:
    location: str
    available_from: datetime
    available_until: datetime
    minutes: int


def _clock(text: str) -> datetime:
    """``"9:00AM"`` / ``"1:15PM"`` (12-hour clock, no space) -> a datetime on a fixed day."""
    return datetime.strptime(text.strip(), "%I:%M%p")


def people_of(constraints: Sequence[Sequence[Any]]) -> tuple[str, datetime, dict[str, Person]]:
    """Start location and time, and each person's constraint, from the data's ``constraints`` list
    (``[start_location, "9:00AM"]`` then ``[name, location, "H:MMAM to H:MMPM", minutes]`` entries)."""
    start_location, start_time = constraints[0][0], _clock(str(constraints[0][1]))
    people = {}
    for name, location, window, minutes in constraints[1:]:
        begin, end = str(window).split("to")
        people[str(name)] = Person(str(location), _clock(begin), _clock(end), int(minutes))
    return str(start_location), start_time, people


def plan_steps(text: str) -> list[str]:
    """The steps of a plan: the text after ``"SOLUTION:"`` (if present), split at full stops."""
    marker = "SOLUTION:"
    if marker in text:
        text = text[text.index(marker) + len(marker) :]
    return [step.strip() for step in text.strip().split(".") if step.strip()]


def meetings_kept(steps: Sequence[str], constraints: Sequence[Sequence[Any]], distances: Mapping[str, Mapping[str, int]]) -> int:
    """Number of people met before the first step that breaks a rule (see the module docstring)."""
    location, clock, people = people_of(constraints)
    met: set[str] = set()
    for step in steps:
        if step.startswith("You start"):
            continue
        if step.startswith("You travel"):
            destination = step.split("travel to ", 1)[-1].split(" in", 1)[0].strip()
            minutes = distances.get(location, {}).get(destination)
            if minutes is None:
                break
            clock, location = clock + timedelta(minutes=int(minutes)), destination
        elif step.startswith("You wait"):
            try:
                until = _clock(step.split("wait until ", 1)[-1])
            except ValueError:
                break
            if until <= clock:
                break
            clock = until
        elif step.startswith("You meet"):
            name = step.split("meet ", 1)[-1].split(" for", 1)[0].strip()
            person = people.get(name)
            if person is None or name in met or person.location != location:
                break
            finish = clock + timedelta(minutes=person.minutes)
            if clock < person.available_from or finish > person.available_until:
                break
            met.add(name)
            clock = finish
        else:
            break
    return len(met)


def _json_or_value(value: Any) -> Any:
    """The data's ``constraints`` / ``dist_matrix`` are JSON text in some copies and objects in others."""
    return json.loads(value) if isinstance(value, str) else value


def meeting_correct(response: str, constraints: Any, dist_matrix: Any, golden_plan: Sequence[str] | str) -> float:
    """1.0 iff the answer meets as many people (validly) as the gold plan does."""
    constraints, distances = _json_or_value(constraints), _json_or_value(dist_matrix)
    if isinstance(golden_plan, str) and golden_plan.lstrip().startswith("[") and len(golden_plan) < 100_000:
        golden_plan = ast.literal_eval(golden_plan)  # Hub re-uploads store the step list as its Python repr (data, bounded)
    gold_steps = plan_steps(" ".join(golden_plan) if not isinstance(golden_plan, str) else golden_plan)
    gold = meetings_kept(gold_steps, constraints, distances)
    return float(meetings_kept(plan_steps(response), constraints, distances) == gold)


def process_trip(doc: Mapping, results: Sequence[str]) -> dict[str, float]:
    return {"acc": trip_correct(results[0], doc["cities"], doc["durations"])}


def process_calendar(doc: Mapping, results: Sequence[str]) -> dict[str, float]:
    return {"acc": calendar_correct(results[0], doc["golden_plan"])}


def process_meeting(doc: Mapping, results: Sequence[str]) -> dict[str, float]:
    return {"acc": meeting_correct(results[0], doc["constraints"], doc["dist_matrix"], doc["golden_plan"])}
