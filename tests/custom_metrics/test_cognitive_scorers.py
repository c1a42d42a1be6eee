"""Hand-made cases for the CLadder yes/no rule and the NATURAL PLAN rule-based parsers (custom_metrics)."""

from __future__ import annotations

import json

import pytest

from custom_metrics.cladder import cladder_correct, process_results, yes_no_prediction
from custom_metrics.natural_plan import (
    calendar_correct,
    meeting_correct,
    meetings_kept,
    parse_calendar_slot,
    parse_trip_plan,
    plan_steps,
    trip_correct,
)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Yes", 1),
        (" yes, because the effect is positive", 1),
        ('"Yes."', 1),
        ("'No'", 0),
        ("\nNo, it does not.", 0),
        ("Nope", 0),  # starts with "no": counted as no, as in the authors' rule
        ("The answer is yes", -1),  # not at the beginning
        ("", -1),
        ("\"'yes'\"", -1),  # double quotes are stripped after single ones: the inner quote stays in front
        ("'\"yes\"'", 1),
    ],
)
def test_yes_no_prediction(response, expected):
    assert yes_no_prediction(response) == expected


def test_cladder_correct_and_hook():
    assert cladder_correct("Yes, it does.", "yes") == 1.0
    assert cladder_correct("No.", "yes") == 0.0
    assert cladder_correct("I am not sure", "no") == 0.0
    assert process_results({"label": "no"}, ["no way"]) == {"acc": 1.0}
    with pytest.raises(ValueError):
        cladder_correct("yes", "maybe")


TRIP = (
    "Here is the trip plan for visiting the 3 European cities for 14 days:\n\n"
    "**Day 1-5:** Arriving in Venice and visit Venice for 5 days.\n"
    "**Day 5:** Fly from Venice to Vienna.\n"
    "**Day 5-9:** Visit Vienna for 5 days.\n"
    "**Day 9:** Fly from Vienna to Dubrovnik.\n"
    "**Day 9-14:** Visit Dubrovnik for 6 days."
)


def test_parse_trip_plan_counts_flight_days_for_both_cities():
    assert parse_trip_plan(TRIP) == [("Venice", 5), ("Vienna", 5), ("Dubrovnik", 6)]


def test_parse_trip_plan_stops_at_the_stated_last_day():
    extra = TRIP + "\n**Day 14:** Fly from Dubrovnik to Paris.\n**Day 14-16:** Visit Paris."
    assert parse_trip_plan(extra) == [("Venice", 5), ("Vienna", 5), ("Dubrovnik", 6)]
    # without the stated length, reading goes on and the extra flight becomes a fourth stay
    unstated = extra.replace("for 14 days", "")
    assert parse_trip_plan(unstated) == [("Venice", 5), ("Vienna", 5), ("Dubrovnik", 6), ("Paris", 3)]


def test_parse_trip_plan_needs_spans_and_flights():
    assert parse_trip_plan("Visit Venice, then Vienna.") == []
    assert parse_trip_plan("**Day 1-5:** Venice") == []
    assert parse_trip_plan("Day 3: fly from Venice to Vienna") == []


def test_trip_correct_is_exact_and_ordered():
    assert trip_correct(TRIP, "Venice**Vienna**Dubrovnik", "5**5**6") == 1.0
    assert trip_correct(TRIP, "Vienna**Venice**Dubrovnik", "5**5**6") == 0.0  # order matters
    assert trip_correct(TRIP, "Venice**Vienna**Dubrovnik", "5**4**7") == 0.0  # durations matter
    assert trip_correct(TRIP, "Venice**Vienna**Dubrovnik**Paris", "5**5**6**2") == 0.0  # a gold stay missing
    assert trip_correct(TRIP, "Venice**Vienna", "5**5") == 1.0  # stays after the gold ones are not looked at
    assert trip_correct("no plan", "Venice", "3") == 0.0


def test_calendar_slot_and_score():
    assert parse_calendar_slot("Here is the proposed time: Monday, 14:30 - 15:30 ") == ("Monday", 14.5, 15.5)
    assert parse_calendar_slot("Tuesday, 9:00 - 9:30 works") == ("Tuesday", 9.0, 9.5)
    assert parse_calendar_slot("Monday 14:30-15:30") is None
    gold = "Here is the proposed time: Monday, 14:30 - 15:30 "
    assert calendar_correct("Monday, 14:30 - 15:30", gold) == 1.0
    assert calendar_correct("Monday, 14:30 - 15:00", gold) == 0.0
    assert calendar_correct("Tuesday, 14:30 - 15:30", gold) == 0.0
    assert calendar_correct("Monday, 9:00 - 9:30 or Monday, 14:30 - 15:30", gold) == 0.0  # only the first span counts
    assert calendar_correct("I cannot find a time.", gold) == 0.0


CONSTRAINTS = [
    ["Golden Gate Park", "9:00AM"],
    ["Sandra", "Chinatown", "8:00AM to 11:00AM", 60],
    ["Kevin", "Marina District", "1:00PM to 3:00PM", 30],
]
DISTANCES = {
    "Golden Gate Park": {"Chinatown": 23, "Marina District": 16},
    "Chinatown": {"Golden Gate Park": 23, "Marina District": 12},
    "Marina District": {"Golden Gate Park": 16, "Chinatown": 16},
}
GOLD = [
    "You start at Golden Gate Park at 9:00AM.",
    "You travel to Chinatown in 23 minutes and arrive at 9:23AM.",
    "You meet Sandra for 60 minutes from 9:23AM to 10:23AM.",
    "You travel to Marina District in 12 minutes and arrive at 10:35AM.",
    "You wait until 1:00PM.",
    "You meet Kevin for 30 minutes from 1:00PM to 1:30PM.",
]


def test_plan_steps_take_the_text_after_solution():
    assert plan_steps("I think... SOLUTION: You start at A at 9:00AM. You wait until 10:00AM.") == [
        "You start at A at 9:00AM",
        "You wait until 10:00AM",
    ]


def test_meetings_kept_walks_the_gold_plan():
    assert meetings_kept(plan_steps(" ".join(GOLD)), CONSTRAINTS, DISTANCES) == 2


@pytest.mark.parametrize(
    ("steps", "kept"),
    [
        (GOLD[:3], 1),
        (GOLD[:2] + ["You meet Kevin for 30 minutes from 9:23AM to 9:53AM."], 0),  # Kevin is elsewhere
        (GOLD[:4] + ["You meet Kevin for 30 minutes."], 1),  # Kevin not there before 1:00PM: walk ends
        (GOLD[:5] + ["You wait until 12:00PM.", GOLD[5]], 1),  # waiting backwards ends the walk
        (GOLD[:3] + ["You meet Sandra for 60 minutes."], 1),  # meeting someone twice ends the walk
        (GOLD[:3] + ["You fly to Marina District."] + GOLD[4:], 1),  # a step of another form ends the walk
        (GOLD[:1] + ["You travel to Atlantis in 5 minutes."] + GOLD[2:], 0),  # no distance: ends the walk
    ],
)
def test_meetings_kept_stops_at_the_first_broken_rule(steps, kept):
    assert meetings_kept(plan_steps(" ".join(steps)), CONSTRAINTS, DISTANCES) == kept


def test_meeting_travel_time_comes_from_the_distance_matrix():
    # Sandra only until 9:30AM: the claimed 5-minute trip does not count, the matrix says 23 minutes
    tight = [CONSTRAINTS[0], ["Sandra", "Chinatown", "8:00AM to 9:30AM", 15]]
    steps = ["You travel to Chinatown in 5 minutes and arrive at 9:05AM", "You meet Sandra for 15 minutes"]
    assert meetings_kept(steps, tight, DISTANCES) == 0


def test_meeting_correct_compares_counts_with_the_gold_plan():
    answer = "SOLUTION: " + " ".join(GOLD)
    assert meeting_correct(answer, CONSTRAINTS, DISTANCES, GOLD) == 1.0
    assert meeting_correct("SOLUTION: " + " ".join(GOLD[:3]), CONSTRAINTS, DISTANCES, GOLD) == 0.0
    # JSON text and a Python-repr step list (the Hub re-uploads' form) are read the same way
    assert meeting_correct(answer, json.dumps(CONSTRAINTS), json.dumps(DISTANCES), GOLD) == 1.0
    assert meeting_correct(answer, CONSTRAINTS, DISTANCES, repr(GOLD)) == 1.0
    assert meeting_correct("SOLUTION: " + " ".join(GOLD[:3]), CONSTRAINTS, DISTANCES, repr(GOLD)) == 0.0
    # another plan meeting the same number of people also counts
    other = GOLD[:1] + ["You travel to Marina District in 16 minutes and arrive at 9:16AM.", "You wait until 1:00PM.", GOLD[5]]
    assert (
        meeting_correct("SOLUTION: " + " ".join(other), CONSTRAINTS, DISTANCES, ["You start at Golden Gate Park at 9:00AM."] + other[1:])
        == 1.0
    )
