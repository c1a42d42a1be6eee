"""NATURAL PLAN data: the pinned single-file download (git blob id check, cache, $TRIANGULATE_SOURCE_URL)
and the local-folder path, on small files in the upstream schema served over file://."""

from __future__ import annotations

import json
import subprocess

import pytest

from datasets_build import natural_plan, sources
from datasets_build.natural_plan import data_file, load_natural_plan, pinned_file, read_examples
from datasets_build.sources import PinnedFile, fetch_file, git_blob_id
from plumbing.errors import UserError

MEETING = {
    "meeting_planning_example_0": {
        "num_people": 1,
        "constraints": [["Golden Gate Park", "9:00AM"], ["Sandra", "Chinatown", "8:00AM to 11:00AM", 60]],
        "dist_matrix": {"Golden Gate Park": {"Chinatown": 23}, "Chinatown": {"Golden Gate Park": 23}},
        "prompt_0shot": "TASK: meet\nSOLUTION:",
        "prompt_5shot": "TASK: x\nSOLUTION: y\n\nTASK: meet\nSOLUTION:",
        "golden_plan": ["You start at Golden Gate Park at 9:00AM.", "You meet nobody."],
        "pred_5shot_pro": "SOLUTION: ...",
    }
}


@pytest.fixture(autouse=True)
def reset_settings(monkeypatch, tmp_path):
    monkeypatch.setattr(sources, "SETTINGS", sources.SourceSettings())
    monkeypatch.setenv("TRIANGULATE_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TRIANGULATE_SOURCE_URL", raising=False)


def _mirror(tmp_path, pin: PinnedFile, text: str):
    """Serve ``text`` at ``file://<mirror>/<owner>/<repo>/<commit>/<path>`` (the raw-file URL layout)."""
    path = tmp_path / "mirror" / pin.owner / pin.repo / pin.commit / pin.path
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return f"file://{tmp_path / 'mirror'}", path


def test_git_blob_id_equals_git_hash_object(tmp_path):
    path = tmp_path / "f.json"
    path.write_text(json.dumps(MEETING), encoding="utf-8")
    expected = subprocess.run(["git", "hash-object", str(path)], capture_output=True, text=True, check=True).stdout.strip()
    assert git_blob_id(path) == expected


def test_pins_are_the_upstream_blob_ids():
    assert pinned_file("trip").git_blob == "de8f16dd532578efed5de226fbd8a998441b5f13"
    assert pinned_file("calendar").path == "data/calendar_scheduling.json"
    assert pinned_file("meeting").url("https://raw.githubusercontent.com") == (
        "https://raw.githubusercontent.com/google-deepmind/natural-plan/ca76db336072ff8931db43bc1ca8d381038cf073/data/meeting_planning.json"
    )


def test_fetch_file_verifies_the_blob_id_and_caches(tmp_path, monkeypatch):
    text = json.dumps(MEETING)
    probe = tmp_path / "probe.json"
    probe.write_text(text, encoding="utf-8")
    pin = PinnedFile("google-deepmind", "natural-plan", "c0ffee", "data/meeting_planning.json", git_blob_id(probe))
    base, served = _mirror(tmp_path, pin, text)
    monkeypatch.setenv("TRIANGULATE_SOURCE_URL", base)
    dest = tmp_path / "cache" / "meeting.json"
    assert fetch_file(pin, dest) == dest and dest.read_text(encoding="utf-8") == text
    served.unlink()  # a second call reads the cache, no download
    assert fetch_file(pin, dest) == dest


def test_fetch_file_refuses_a_changed_file(tmp_path, monkeypatch):
    pin = PinnedFile("google-deepmind", "natural-plan", "c0ffee", "data/trip_planning.json", "0" * 40)
    base, _ = _mirror(tmp_path, pin, "{}")
    monkeypatch.setenv("TRIANGULATE_SOURCE_URL", base)
    dest = tmp_path / "cache" / "trip.json"
    with pytest.raises(UserError, match="checksum mismatch .* expected git blob 0000"):
        fetch_file(pin, dest)
    assert not dest.exists() and not list(dest.parent.glob(".*part*"))


def test_fetch_file_without_a_checksum_is_refused(tmp_path):
    with pytest.raises(UserError, match="no checksum recorded"):
        fetch_file(PinnedFile("o", "r", "c", "p.json", None), tmp_path / "x.json")


def test_unreachable_mirror_is_one_user_error(tmp_path, monkeypatch):
    monkeypatch.setenv("TRIANGULATE_SOURCE_URL", f"file://{tmp_path / 'nowhere'}")
    with pytest.raises(UserError, match="cannot download .*natural-plan/ca76db33"):
        data_file("calendar")


def test_task_loader_downloads_the_pinned_file(tmp_path, monkeypatch):
    """Without natural_plan_dir the loader fetches the pinned URL (here a mirror serving a file with that blob id)."""
    text = json.dumps(MEETING)
    probe = tmp_path / "probe.json"
    probe.write_text(text, encoding="utf-8")
    name, _, fields = natural_plan.SUBTASKS["meeting"]
    monkeypatch.setitem(natural_plan.SUBTASKS, "meeting", (name, git_blob_id(probe), fields))
    base, _ = _mirror(tmp_path, pinned_file("meeting"), text)
    monkeypatch.setenv("TRIANGULATE_SOURCE_URL", base)
    data = load_natural_plan("meeting")
    row = data["test"][0]
    assert row["id"] == "meeting_planning_example_0"
    assert json.loads(row["constraints"])[1] == ["Sandra", "Chinatown", "8:00AM to 11:00AM", 60]
    assert json.loads(row["dist_matrix"])["Chinatown"] == {"Golden Gate Park": 23}
    assert row["golden_plan"] == MEETING["meeting_planning_example_0"]["golden_plan"]
    assert (tmp_path / "cache" / "sources" / "natural_plan-ca76db336072" / "data" / "meeting_planning.json").is_file()


def test_local_folder_is_used_as_given(tmp_path):
    (tmp_path / "np" / "data").mkdir(parents=True)
    (tmp_path / "np" / "data" / "meeting_planning.json").write_text(json.dumps(MEETING), encoding="utf-8")
    assert data_file("meeting", tmp_path / "np") == tmp_path / "np" / "data" / "meeting_planning.json"
    assert len(load_natural_plan("meeting", natural_plan_dir=str(tmp_path / "np"))["test"]) == 1
    with pytest.raises(UserError, match="holds neither trip_planning.json"):
        data_file("trip", tmp_path / "np")
    with pytest.raises(UserError, match="unknown NATURAL PLAN subtask"):
        data_file("travel", tmp_path / "np")


def test_examples_lacking_fields_are_one_user_error(tmp_path):
    path = tmp_path / "trip_planning.json"
    path.write_text(json.dumps({"trip_planning_example_0": {"prompt_5shot": "x", "golden_plan": "y"}}), encoding="utf-8")
    with pytest.raises(UserError, match="lacks cities, durations"):
        read_examples(path, "trip")
