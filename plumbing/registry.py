"""One registry mechanism for everything looked up by name (dataset builders, data generators,
play tasks, play groups).

A ``Registry`` lists the modules that fill it (a list, or a function that finds them when first
read: a plugin folder, entry points); the first lookup imports them all, and a listed module that
fails to import is an error (never a silent skip). Registering a name twice is an
error. An unknown name is a ``UserError`` that lists the known ones.

Example::

    TASKS: Registry[Callable[..., TaskSpec]] = Registry("task", modules=("multiturn.games.nback",))

    @TASKS.register("nback_verbal_1")
    def make(**task_args): ...

    TASKS.get("nback_verbal_1")
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from typing import Generic, TypeVar

from plumbing.errors import UserError

T = TypeVar("T")


class Registry(Generic[T]):
    """Name -> object, filled by the modules in ``modules`` when first read."""

    def __init__(self, kind: str, modules: Iterable[str] | Callable[[], Iterable[str]] = ()):
        self.kind = kind
        self._modules = modules if callable(modules) else tuple(modules)
        self._items: dict[str, T] = {}
        self._loaded = False

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: ``@REGISTRY.register("name")`` registers the decorated object and returns it."""

        def wrap(obj: T) -> T:
            self.add(name, obj)
            return obj

        return wrap

    def add(self, name: str, obj: T) -> None:
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} registered twice")
        self._items[name] = obj

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules that fill this registry (found now when given as a function)."""
        return tuple(self._modules()) if callable(self._modules) else self._modules

    def load(self) -> None:
        """Import every listed module (each registers its entries); an import failure propagates."""
        if self._loaded:
            return
        self._loaded = True
        for module_name in self.modules:
            importlib.import_module(module_name)

    def get(self, name: str) -> T:
        self.load()
        try:
            return self._items[name]
        except KeyError:
            raise UserError(f"unknown {self.kind} {name!r}; known: {', '.join(sorted(self._items))}") from None

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._items

    def names(self) -> list[str]:
        self.load()
        return sorted(self._items)

    def items(self) -> dict[str, T]:
        self.load()
        return dict(self._items)
