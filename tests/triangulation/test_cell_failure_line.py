"""Issue 30 item 15: after a play's final error line nothing follows from asyncio ("Task exception was never
retrieved" and a traceback: the failures of the other requests of a gathered batch, already reported), and
the suite names a failed cell by its log's real error line, never a progress bar closed after it."""

from __future__ import annotations

import asyncio
import gc
import logging

from triangulation.suite.serve import last_line

ERROR = "triangulate: error: every episode failed on backend errors (1: wcst: 1); first error: ValueError: Cannot combine"
LOG = f"""wcst:   0%|          | 0/1 [00:00<?, ?episode/s]
Requesting API:   0%|          | 0/1 [00:00<?, ?it/s]\r
Requesting API: 100%|##########| 1/1 [00:00<00:00, 50.45it/s]
{ERROR}
Task exception was never retrieved
future: <Task finished name='Task-7' coro=<amodel_call()> exception=ValueError('Cannot combine AUTHORIZATION header')>
Traceback (most recent call last):
  File "aiohttp/client.py", line 1, in _request
ValueError: Cannot combine AUTHORIZATION header with AUTH argument or credentials encoded in URL
Requesting API:   0%|          | 0/1 [00:00<?, ?it/s]
"""


def test_the_suite_reports_the_error_line_not_a_progress_bar(tmp_path):
    log = tmp_path / "cell.log"
    log.write_text(LOG, encoding="utf-8")
    assert last_line(log) == ERROR
    log.write_text("loading\nValueError: boom\nRequesting API:   0%|          | 0/3 [00:00<?, ?it/s]\n", encoding="utf-8")
    assert last_line(log) == "ValueError: boom"  # no triangulate error line: the last line that is no progress bar


def test_an_unretrieved_task_exception_prints_nothing_after_play_installs_its_filters(caplog):
    from plumbing.logs import install_log_scrubber

    install_log_scrubber()  # what `triangulate play` and `triangulate eval` install

    async def fails() -> None:
        raise ValueError("Cannot combine AUTHORIZATION header with AUTH argument or credentials encoded in URL")

    async def gather_first_failure() -> None:
        tasks = [asyncio.ensure_future(fails()) for _ in range(3)]
        await asyncio.wait(tasks)
        tasks[0].exception()  # the first failure is retrieved (reported), the others are not

    with caplog.at_level(logging.ERROR, logger="asyncio"):
        asyncio.run(gather_first_failure())
        gc.collect()
    assert not [r for r in caplog.records if "never retrieved" in r.getMessage()]
