"""The GPU pool (issue 29): on a fake 8-GPU node with triangulating.yaml's sizes it never oversubscribes a GPU,
a freed GPU is taken at once (in the plan and at run time), and replicas are added only where they shorten
the makespan."""

from __future__ import annotations

import threading
import time

from tests.triangulation.test_suite import ROOT
from triangulation.suite.counting import model_costs
from triangulation.suite.estimate import Job
from triangulation.suite.placement import busy_share, choose_replicas, makespan, place_pool, pool_placements, schedule
from triangulation.suite.pool import run_pool
from triangulation.suite.spec import load_suite

EIGHT = [str(i) for i in range(8)]


def triangulating_jobs(split: bool = True) -> list[Job]:
    suite = load_suite(ROOT / "suites" / "triangulating.yaml")
    leaves = {"natural_plan": ["natural_plan_trip", "natural_plan_calendar"], "mmlu": [f"mmlu_{i}" for i in range(57)]}
    return [c.job for c in model_costs(suite, 8, leaves=leaves, split=split)]


def check_never_oversubscribed(slots, n: int) -> None:
    for s in slots:
        assert len(s.gpus) == s.job.gpus * s.replicas and all(0 <= g < n for g in s.gpus)
    for a in slots:  # slots that overlap in time hold disjoint GPUs
        for b in slots:
            if a is not b and a.start < b.end and b.start < a.end:
                assert not set(a.gpus) & set(b.gpus), (a.job.name, b.job.name)


def check_no_gpu_left_idle_while_a_job_waits(slots, n: int) -> None:
    """At each start time t > 0, the job starting could not have started earlier: before t (since the last
    end) fewer GPUs than it needs were free."""
    ends = sorted({s.end for s in slots})
    for s in slots:
        if s.start == 0:
            continue
        assert s.start in ends, f"{s.job.name} starts at {s.start}, when nothing ended"
        before = max(e for e in ends if e < s.start) if any(e < s.start for e in ends) else 0.0
        busy = sum(len(o.gpus) for o in slots if o.start <= before < o.end)
        assert n - busy < len(s.gpus), f"{s.job.name} waited while {n - busy} GPUs were free"


def test_the_battery_on_a_fake_8_gpu_node_is_never_oversubscribed_and_idles_no_gpu():
    jobs = triangulating_jobs()
    assert {j.name: j.gpus for j in jobs}["Qwen2.5-72B"] == 4
    for replicas in ({}, choose_replicas(jobs, 8)):
        slots = schedule(jobs, 8, replicas)
        assert sorted(s.job.name for s in slots) == sorted(j.name for j in jobs)
        check_never_oversubscribed(slots, 8)
        check_no_gpu_left_idle_while_a_job_waits(slots, 8)
    # longest expected work first: the two 70B-class models start at once, at 0
    first = {s.job.name for s in schedule(jobs, 8) if s.start == 0 and s.job.gpus == 4}
    assert first == {"Qwen2.5-72B", "Llama-3.3-70B"}


def test_replicas_only_where_they_shorten_the_makespan():
    jobs = triangulating_jobs()
    chosen = choose_replicas(jobs, 8)
    span = makespan(schedule(jobs, 8, chosen))
    assert span <= makespan(schedule(jobs, 8))
    for name, r in chosen.items():
        if r > 1:  # each replica kept pays: one fewer makes the sweep longer
            assert makespan(schedule(jobs, 8, {**chosen, name: r - 1})) > span
    # a job whose extra replicas gain nothing gets none; one alone on an idle node gets them
    flat = [Job("flat", 1, (10.0, 10.0, 10.0)), Job("big", 2, (30.0,))]
    assert choose_replicas(flat, 4) == {"flat": 1, "big": 1}
    alone = [Job("small", 1, (40.0, 20.0, 14.0, 11.0))]
    assert choose_replicas(alone, 4) == {"small": 4}
    slots = schedule(alone, 4, {"small": 4})
    assert slots[0].gpus == (0, 1, 2, 3) and busy_share(slots, 4) == 1.0


def test_pool_placements_of_the_battery_name_gpus_replicas_and_times():
    suite = load_suite(ROOT / "suites" / "triangulating.yaml")
    jobs = triangulating_jobs()
    placements = place_pool(suite.models, EIGHT, jobs)
    assert [p.model.name for p in placements] == [m.name for m in suite.models]
    for p in placements:
        assert len(p.gpus) == p.model.gpu_count * p.replicas and p.start is not None and p.end > p.start
    run = pool_placements(suite, EIGHT)  # the runner's: from the suite alone
    longest = max(jobs, key=lambda j: j.duration(1)).name
    assert longest in {p.model.name for p in run if p.start == 0}
    assert pool_placements(suite, [])[1].gpus is None  # no GPUs: one model after another


def test_run_pool_takes_a_freed_gpu_at_once_and_never_oversubscribes():
    """Real threads on a fake 3-GPU node: 'a' (2 GPUs, long) and 'b' (1, short) start at once; 'c' (1 GPU)
    starts the moment 'b' ends, before 'a' does (no waves); 'd' (3 GPUs) waits for every GPU."""
    durations = {"a": 0.6, "b": 0.1, "c": 0.1, "d": 0.05}
    lock = threading.Lock()
    held: set[str] = set()
    events: list[tuple[str, str, float, tuple[str, ...]]] = []

    def start(name: str, ids: list[str]) -> str:
        with lock:
            assert not held & set(ids), f"{name} got a GPU in use: {ids}"
            held.update(ids)
        time.sleep(durations[name])
        with lock:
            held.difference_update(ids)
        return name

    def on_event(kind: str, name: str, ids: list[str]) -> None:
        events.append((kind, name, time.monotonic(), tuple(ids)))

    results = run_pool([("a", 2), ("d", 3), ("b", 1), ("c", 1)], ["0", "1", "2"], start, on_event)
    assert results == {n: n for n in durations}
    t = {(k, n): when for k, n, when, _ in events}
    assert t[("start", "c")] - t[("end", "b")] < 0.05, "the freed GPU was not taken at once"
    assert t[("start", "c")] < t[("end", "a")]
    assert t[("start", "d")] >= t[("end", "a")] and t[("start", "d")] >= t[("end", "c")]
    assert dict((n, ids) for k, n, _, ids in events if k == "start")["c"] == ("2",)
