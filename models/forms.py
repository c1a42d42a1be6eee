"""The form of a chance reply, looked up through the layer above.

The chance player (:mod:`models.chance`) knows no game: a layer above it (the side runner's task registry,
:mod:`multiturn.registry`) registers a :data:`ReplyForm` that answers "what would a player that follows this
task's format and knows nothing reply?" for the tasks it knows. This module holds that hook and the filler
words games and the chance player share, and imports nothing heavy (the task registry imports it at load).
"""

from __future__ import annotations

import random
from collections.abc import Callable

#: filler words for a reply when the prompt offers none (the chance player and the games' chance replies)
#: the chance player's model name (``--model random``; registered by :mod:`models.chance`)
CHANCE_MODEL = "random"
CHANCE_WORDS: tuple[str, ...] = ("thing", "place", "often", "small", "people", "use", "common", "kind", "make", "found")

#: ``form(task, role, messages, rng) -> reply`` or None when the form does not know the task
ReplyForm = Callable[[str | None, str | None, list[dict[str, str]], random.Random], str | None]

_FORMS: list[ReplyForm] = []


def register_reply_form(form: ReplyForm) -> None:
    """Consult ``form`` for every chance reply (idempotent: registering the same function twice adds it once)."""
    if form not in _FORMS:
        _FORMS.append(form)


def reply_form_for(task: str | None, role: str | None, messages: list[dict[str, str]], rng: random.Random) -> str | None:
    """The first registered form's reply for ``task``, else None (the chance player then answers generically)."""
    for form in _FORMS:
        reply = form(task, role, messages, rng)
        if reply is not None:
            return reply
    return None
