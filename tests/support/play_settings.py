"""A test's :class:`multiturn.engine.settings.PlaySettings`: what ``triangulate play`` builds from its flags."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from models.ref import ModelRef
from multiturn.engine.settings import PlaySettings


def play_settings(
    tasks: list[str] | tuple[str, ...], model: str = "m", model_args: Any = None, output_dir: str | Path | None = None, **values: Any
) -> PlaySettings:
    """``tasks`` played by ``model`` (its folder: the model's name, ``m`` by default), stored under ``output_dir``."""
    output = None if output_dir is None else str(output_dir)
    return PlaySettings.for_model(ModelRef.parse(model, model_args), tuple(tasks), output_path=output, **values)


def load_model(model: str | None, model_args: Any = None, **kwargs: Any) -> Any:
    """The backend a command builds from ``--model``/``--model_args`` (parsed, resolved, loaded)."""
    from models.loading import load_lm, resolve_model

    backend = resolve_model(ModelRef.parse(model, model_args), device=kwargs.get("device"), prefix_cache=kwargs.get("prefix_cache"))
    return load_lm(backend, **kwargs)
