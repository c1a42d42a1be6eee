"""Headless Chromium for the HTML tests: load a page, read its DOM after scripts ran and its console errors.

Debian's ``chromium`` package (``.ci/run`` installs it). When no browser is on PATH the tests skip with
that reason; nothing else makes them skip.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
]


def chromium() -> str:
    """The browser's path, or skip the calling test saying how to get one."""
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no chromium on PATH: `apt-get install -y chromium` (.ci/run installs it)")


@dataclass
class Loaded:
    dom: str
    console: list[str]  # the page's console lines

    @property
    def errors(self) -> list[str]:
        """Uncaught exceptions and console.error lines."""
        return [line for line in self.console if "Uncaught" in line or ":ERROR:CONSOLE" in line]


def run_chromium(args: list[str], timeout: int = 120) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args], capture_output=True, text=True, timeout=timeout)


def load(page: Path, fragment: str = "") -> Loaded:
    """Open ``page`` (``#fragment`` appended), let its scripts run, return the DOM and console lines."""
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    proc = run_chromium(["--enable-logging=stderr", "--v=0", "--virtual-time-budget=3000", "--dump-dom", url])
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    return Loaded(dom=proc.stdout, console=console)


def screenshot(page: Path, png: Path, fragment: str = "", size: str = "1200,1600") -> Path:
    url = Path(page).resolve().as_uri() + (f"#{fragment}" if fragment else "")
    run_chromium([f"--window-size={size}", f"--screenshot={png}", url])
    return png
