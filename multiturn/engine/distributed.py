"""Ranks of a distributed run (``accelerate launch``), read off the lm-eval ``LM``.

Every rank plays :func:`shard` of the pending episodes; rank 0 collects the records with
:func:`gather_to_rank0`; :func:`barrier` keeps the ranks in step around the shared files. With one
process all three are no-ops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


def rank_and_world(lm) -> tuple[int, int]:
    """``(rank, world_size)`` of an lm-eval LM (1 process unless it runs under ``accelerate launch``)."""
    return int(getattr(lm, "rank", 0) or 0), int(getattr(lm, "world_size", 1) or 1)


def shard(items: Sequence[T], rank: int, world: int) -> list[T]:
    """This rank's share of ``items``: every ``world``-th one from position ``rank``."""
    return list(items[rank::world])


def gather_to_rank0(lm, obj: Any) -> list[Any] | None:
    """Gather one object per rank on rank 0 (lm-eval's ``LM.gather_object``); None on other ranks."""
    if rank_and_world(lm)[1] <= 1:
        return [obj]
    return lm.gather_object(obj, dst=0)


def barrier(lm) -> None:
    """Wait for every rank (lm-eval's ``LM.barrier``); nothing to wait for in a single process."""
    if rank_and_world(lm)[1] > 1 and hasattr(lm, "barrier"):
        lm.barrier()
