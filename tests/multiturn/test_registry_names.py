"""A task's name is its registration (issue 28): the ``plus_one`` task whose spec said ``name="plus_1"`` wrote
``episodes_plus_1.jsonl`` under the lock ``episodes_plus_one.jsonl.lock`` and could not be scored; a spec with no
name wrote ``episodes_.jsonl``. Now the registry names the task, refuses a second name that differs, and refuses a
class that is not a ``TaskSpec``."""

from __future__ import annotations

from functools import partial

import pytest

from models.scripted import ScriptedLM
from multiturn import registry
from multiturn.engine.runner import run_task, run_tasks
from multiturn.engine.settings import TaskSettings
from multiturn.game import Game, Request, TaskSpec
from tests.support.play_settings import play_settings


class PlusOneGame(Game):
    """Say the number plus one."""

    @property
    def done(self) -> bool:
        return bool(self.transcript)

    def next_request(self) -> Request | None:
        return None if self.done else Request(messages=[{"role": "user", "content": str(self.instance["n"])}])

    def on_reply(self, reply: str) -> None:
        self.transcript.append({"role": "player", "content": reply})

    def scores(self) -> dict[str, float]:
        return {"accuracy": float(self.transcript[-1]["content"].strip() == str(self.instance["n"] + 1))}


class PlusOneTask(TaskSpec):
    def instances(self, seed: int) -> list[dict]:
        return [{"id": f"p{i}", "n": i} for i in range(3)]

    def make_game(self, instance, seed: int) -> Game:
        return PlusOneGame(instance)


class MisnamedTask(PlusOneTask):
    name = "plus_1"


@pytest.fixture
def fresh_tasks(monkeypatch):
    """The registry's tasks with nothing added by earlier tests (the games are loaded first)."""
    registry.TASKS.load()
    monkeypatch.setattr(registry.TASKS, "_items", dict(registry.TASKS._items))


def test_a_spec_that_states_another_name_cannot_be_registered(fresh_tasks):
    with pytest.raises(TypeError, match=r"MisnamedTask states name = 'plus_1'.*drop the name"):
        registry.register("plus_one")(MisnamedTask)
    with pytest.raises(TypeError, match=r"states name = 'plus_1'"):  # a partial of the class is the same class
        registry.register("plus_one")(partial(MisnamedTask))
    assert "plus_one" not in registry.TASKS


def test_a_factory_whose_task_states_another_name_cannot_be_built(fresh_tasks):
    registry.register("plus_one")(lambda: MisnamedTask())
    with pytest.raises(TypeError, match=r"play task 'plus_one'.*states name = 'plus_1'"):
        registry.get_task("plus_one")


def test_the_registry_checks_the_registered_class_and_the_factory_result(fresh_tasks):
    class NotATask:
        pass

    with pytest.raises(TypeError, match="NotATask is not a multiturn.game.TaskSpec subclass"):
        registry.register("not_a_task")(NotATask)
    registry.register("returns_a_dict")(lambda: {"name": "x"})
    with pytest.raises(TypeError, match="returned dict, not a multiturn.game.TaskSpec"):
        registry.get_task("returns_a_dict")


def test_a_nameless_spec_takes_its_registration_everywhere(fresh_tasks, tmp_path):
    registry.register("plus_one")(PlusOneTask)
    assert registry.get_task("plus_one").name == "plus_one"
    lm = ScriptedLM(lambda m: str(int(m[-1]["content"]) + 1))
    payload, _ = run_tasks(play_settings(["plus_one"], output_dir=tmp_path), {"player": lm}, progress=False)
    assert payload["results"]["plus_one"]["accuracy,none"] == 1.0
    files = sorted(p.name for p in (tmp_path / "m").glob("episodes_*"))
    assert "episodes_plus_one.jsonl" in files and all(f.startswith("episodes_plus_one.") for f in files), files  # its lock and settings too


def test_the_engine_refuses_a_task_with_no_name():
    with pytest.raises(ValueError, match="PlusOneTask has no name: build it with multiturn.registry.get_task"):
        run_task(TaskSettings(PlusOneTask()), {"player": ScriptedLM(lambda m: "1")}, progress=False)


def test_no_registered_game_states_a_name_of_its_own():
    """Every built-in task is named by its registration alone (its class and factory state none)."""
    for name in registry.task_names():
        task = registry.get_task(name)
        if not type(task).__module__.startswith(registry.GAMES_PACKAGE):
            continue  # a task another test registered
        cls = registry._factory_class(registry.TASKS.get(name))
        assert cls is None or not cls.name, f"{name}: {cls.__qualname__} states name = {cls.name!r}"
        assert task.name == name
