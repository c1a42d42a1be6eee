"""Log filters every command installs: the secret scrubber on each handler, :class:`OnceFilter` against repeats and
:class:`UnretrievedTaskFilter` against asyncio's tracebacks of failures already reported."""

from __future__ import annotations

import logging
import warnings

from plumbing.secrets import LogScrubber


class OnceFilter(logging.Filter):
    """Lets a WARNING (or INFO) line through once per process: lm-eval repeats its ``--metadata`` hint per
    task load and transformers its cache notices per model call. Errors always pass. Lines of the loggers in
    :attr:`BY_LINE` count as repeats when they come from the same source line (the hint names each task)."""

    BY_LINE = ("lm_eval.api.task", "transformers")

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return True
        by_line = record.levelno >= logging.WARNING and record.name.startswith(self.BY_LINE)
        key = (record.name, f"{record.pathname}:{record.lineno}" if by_line else record.getMessage())
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


class UnretrievedTaskFilter(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" (and its traceback): lm-eval's API models gather
    their requests and raise the first failure, which the retry layer records and reports in one line; the
    failures of the other requests of that batch are never retrieved, and asyncio would print each one, with
    a traceback, after the command's final error line."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Task exception was never retrieved")


class NoiseFilter(logging.Filter):
    """Drops lines that say nothing to a triangulate user: lm-eval's ``--metadata`` hint (printed for every
    task that builds its own dataset, ours among them: they take no such kwargs) and its upper-case ``--limit``
    warning (``triangulate eval`` says what ``--limit`` means in one line of its own)."""

    DROPPED = ("Custom kwargs can be passed to `--metadata`", "--limit SHOULD ONLY BE USED FOR TESTING")

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith(self.DROPPED)


#: library warnings about the libraries' own calls, not the user's (transformers deprecates an argument that
#: lm-eval 0.4.13's ``hf`` model passes to ``generate`` itself)
NOISY_WARNINGS = (
    (FutureWarning, r"`past_key_values` is deprecated"),
    (UserWarning, r"pkg_resources is deprecated"),  # jieba, IFEval's imports: setuptools < 81 (triangulate[battery])
)


def install_log_scrubber() -> None:
    """Put the secret scrubber (:class:`plumbing.secrets.LogScrubber`), :class:`OnceFilter` and
    :class:`NoiseFilter` on every handler of the root, ``lm_eval`` and ``transformers`` loggers, and silence
    :data:`NOISY_WARNINGS` (idempotent)."""
    for logger in (logging.getLogger(), logging.getLogger("lm_eval"), logging.getLogger("transformers")):
        for handler in logger.handlers:
            for kind in (LogScrubber, OnceFilter, NoiseFilter):
                if not any(isinstance(f, kind) for f in handler.filters):
                    handler.addFilter(kind())
    for category, message in NOISY_WARNINGS:
        warnings.filterwarnings("ignore", message=message, category=category)
    asyncio_log = logging.getLogger("asyncio")
    if not any(isinstance(f, UnretrievedTaskFilter) for f in asyncio_log.filters):
        asyncio_log.addFilter(UnretrievedTaskFilter())
