"""A real one-node SLURM cluster for tests: Debian's ``munge``, ``slurmctld``, ``slurmd`` and ``slurm-client``.

:func:`slurm_cluster` starts ``munged`` (as user ``munge``, with a random ``/etc/munge/munge.key`` of
mode 400 when there is none), then ``slurmctld`` and ``slurmd`` in the foreground of their own
processes with a generated ``slurm.conf`` (this host from ``hostname -s``, its CPUs from ``nproc``,
RealMemory = total MB - 1024, one partition ``debug``), waits until ``sinfo`` shows the node idle, and
yields the environment the clients need (``SLURM_CONF``). It stops what it started by PID. Spool,
state, logs and the config live in a temporary folder, so nothing outside it is changed but the munge
key and socket folder. Needs root (slurmd runs jobs as their user) and the four packages
(``.ci/run`` installs them).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

MUNGE_KEY = Path("/etc/munge/munge.key")
MUNGE_SOCKET_DIR = Path("/run/munge")
TOOLS = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "scancel", "sinfo")


def missing_tools() -> list[str]:
    return [t for t in TOOLS if shutil.which(t) is None]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def slurm_conf(folder: Path, host: str, cpus: int, memory_mb: int) -> str:
    ctld, slurmd = _free_port(), _free_port()
    return "\n".join(
        [
            "ClusterName=local",
            f"SlurmctldHost={host}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            # a requeued job may start again cred_expire + 1 s after its requeue (default 120 s, slurm.conf(5)):
            # short here so the time-limit test's legs follow each other; real clusters keep their own
            "AuthInfo=cred_expire=10",
            "CredType=cred/munge",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "SchedulerType=sched/backfill",
            "SchedulerParameters=sched_interval=5,bf_interval=5",  # a requeued job starts seconds after it may
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_Core_Memory",
            "MpiDefault=none",
            "ReturnToService=2",
            f"SlurmctldPort={ctld}",
            f"SlurmdPort={slurmd}",
            f"StateSaveLocation={folder / 'state'}",
            f"SlurmdSpoolDir={folder / 'spool'}",
            f"SlurmctldPidFile={folder / 'slurmctld.pid'}",
            f"SlurmdPidFile={folder / 'slurmd.pid'}",
            f"SlurmctldLogFile={folder / 'slurmctld.log'}",
            f"SlurmdLogFile={folder / 'slurmd.log'}",
            "JobCompType=jobcomp/none",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "MinJobAge=300",
            "KillWait=5",
            f"NodeName={host} CPUs={cpus} RealMemory={memory_mb} State=UNKNOWN",
            f"PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


def _memory_mb() -> int:
    with open("/proc/meminfo", encoding="ascii") as fh:
        total_kb = int(next(line for line in fh if line.startswith("MemTotal:")).split()[1])
    return total_kb // 1024 - 1024


def _start_munged(folder: Path) -> subprocess.Popen | None:
    """munged as user munge (None when one already answers)."""
    if subprocess.run(["sh", "-c", "munge -n | unmunge"], capture_output=True).returncode == 0:
        return None
    if not MUNGE_KEY.is_file():
        MUNGE_KEY.parent.mkdir(parents=True, exist_ok=True)
        MUNGE_KEY.write_bytes(secrets.token_bytes(128))
    shutil.chown(MUNGE_KEY, "munge", "munge")
    MUNGE_KEY.chmod(0o400)
    MUNGE_SOCKET_DIR.mkdir(parents=True, exist_ok=True)
    shutil.chown(MUNGE_SOCKET_DIR, "munge", "munge")
    MUNGE_SOCKET_DIR.chmod(0o755)
    log = open(folder / "munged.log", "ab")  # noqa: SIM115  (closed with the process)
    proc = subprocess.Popen(["munged", "--foreground", "--force"], user="munge", group="munge", stdout=log, stderr=log)
    _wait(
        lambda: subprocess.run(["sh", "-c", "munge -n | unmunge"], capture_output=True).returncode == 0, 20, "munged", folder / "munged.log"
    )
    return proc


def _wait(ready, timeout: float, what: str, log: Path) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline:
        if ready():
            return
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-1500:] if log.is_file() else ""
    raise RuntimeError(f"{what} did not come up in {timeout:g} s:\n{tail}")


def _stop(proc: subprocess.Popen | None) -> None:
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def slurm_cluster(folder: Path) -> Iterator[dict[str, str]]:
    """Start munged, slurmctld and slurmd; yield the clients' environment; stop them by PID."""
    folder.mkdir(parents=True, exist_ok=True)
    for sub in ("state", "spool"):
        (folder / sub).mkdir(exist_ok=True)
    host = socket.gethostname().split(".")[0]
    conf = folder / "slurm.conf"
    conf.write_text(slurm_conf(folder, host, os.cpu_count() or 1, _memory_mb()), encoding="utf-8")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    started: list[subprocess.Popen | None] = []
    try:
        started.append(_start_munged(folder))
        started.append(
            subprocess.Popen(["slurmctld", "-D", "-i", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        )
        started.append(subprocess.Popen(["slurmd", "-D", "-f", str(conf)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        def idle() -> bool:
            out = subprocess.run(["sinfo", "-h", "-o", "%t"], env=env, capture_output=True, text=True).stdout.split()
            return bool(out) and all(s in ("idle", "mix", "alloc") for s in out)

        _wait(idle, 60, "the SLURM node", folder / "slurmd.log")
        yield env
    finally:
        for proc in reversed(started):
            _stop(proc)
