"""A Spark standalone cluster on the loopback interface, for the tests: one master and N workers,
started from the jars the `pyspark` package ships, on ports picked free, and stopped again.

Every daemon is started in a session of its own, so that stopping it (its process group) also stops
the executor JVMs and Python workers a worker forked. Every wait is bounded; a daemon that dies
or does not come up fails the start with the tail of its log.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"
START_SECONDS = 120.0  # a master and its workers on a loaded 2-core machine: about 15-30 s
STOP_SECONDS = 20.0


def spark_home() -> str:
    import pyspark

    return os.environ.get("SPARK_HOME") or os.path.dirname(pyspark.__file__)


def java() -> str | None:
    home = os.environ.get("JAVA_HOME")
    path = os.path.join(home, "bin", "java") if home else None
    if path and os.path.exists(path):
        return path
    from shutil import which

    return which("java")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def scala_version() -> str:
    """The Scala version of the shipped jars (`spark-core_2.13-*.jar`): a worker's launcher needs it to
    build an executor's class path (bin/spark-class sets it from load-spark-env.sh; we start no script)."""
    for jar in sorted(Path(spark_home(), "jars").glob("spark-core_*.jar")):
        return jar.name.split("_", 1)[1].split("-", 1)[0]
    return "2.13"


def env() -> dict[str, str]:
    """The environment of the daemons and of spark-submit: loopback only, this interpreter's Python."""
    return {
        **os.environ,
        "SPARK_HOME": spark_home(),
        "SPARK_SCALA_VERSION": scala_version(),
        "SPARK_LOCAL_IP": HOST,
        "SPARK_LOCAL_HOSTNAME": "localhost",
        "PYSPARK_PYTHON": sys.executable,
        "PYSPARK_DRIVER_PYTHON": sys.executable,
    }


@dataclass
class Daemon:
    name: str
    proc: subprocess.Popen[bytes]
    log: Path

    def tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""


@dataclass
class Cluster:
    url: str
    master: Daemon
    workers: list[Daemon] = field(default_factory=list)

    def daemons(self) -> list[Daemon]:
        return [*self.workers, self.master]


def _daemon(name: str, cls: str, args: list[str], folder: Path) -> Daemon:
    java_bin = java()
    assert java_bin is not None
    log = folder / f"{name}.log"
    cmd = [
        java_bin,
        "-Xmx256m",
        "-XX:TieredStopAtLevel=1",
        "-Dspark.master.rest.enabled=false",
        "-cp",
        f"{spark_home()}/jars/*",
        cls,
        *args,
    ]
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            cmd,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env(),
            cwd=folder,
            start_new_session=True,
        )
    return Daemon(name, proc, log)


def _wait_for(daemon: Daemon, pattern: str, count: int, deadline: float) -> None:
    rx = re.compile(pattern)
    while True:
        try:
            found = len(rx.findall(daemon.log.read_text(errors="replace")))
        except OSError:
            found = 0
        if found >= count:
            return
        if daemon.proc.poll() is not None:
            raise RuntimeError(f"{daemon.name} exited ({daemon.proc.returncode}):\n{daemon.tail()}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{daemon.name}: no {pattern!r} x{count} within {START_SECONDS:.0f} s:\n{daemon.tail()}")
        time.sleep(0.25)


def start(folder: Path, workers: int = 2, cores: int = 1, memory: str = "1g") -> Cluster:
    """A master and `workers` workers (each `cores` cores, `memory` for executors), all registered."""
    folder.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + START_SECONDS
    port = free_port()
    master = _daemon(
        "master",
        "org.apache.spark.deploy.master.Master",
        ["--host", HOST, "--port", str(port), "--webui-port", str(free_port())],
        folder,
    )
    cluster = Cluster(f"spark://{HOST}:{port}", master)
    try:
        _wait_for(master, r"I have been elected leader", 1, deadline)
        for i in range(workers):
            work = folder / f"work-{i}"
            work.mkdir(exist_ok=True)
            cluster.workers.append(
                _daemon(
                    f"worker-{i}",
                    "org.apache.spark.deploy.worker.Worker",
                    [
                        "--host",
                        HOST,
                        "--port",
                        str(free_port()),
                        "--webui-port",
                        str(free_port()),
                        "--cores",
                        str(cores),
                        "--memory",
                        memory,
                        "--work-dir",
                        str(work),
                        cluster.url,
                    ],
                    folder,
                )
            )
        _wait_for(master, r"Registering worker ", workers, deadline)
    except BaseException:
        stop(cluster)
        raise
    return cluster


def stop(cluster: Cluster) -> None:
    """Stop the workers (and the executors they started), then the master: TERM to each daemon's
    process group, KILL what is left after a bounded wait."""
    for daemon in cluster.daemons():
        _signal(daemon, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    for daemon in cluster.daemons():
        try:
            daemon.proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        _signal(daemon, signal.SIGKILL)  # the group: executors and Python workers a worker left behind
        try:
            daemon.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass


def _signal(daemon: Daemon, sig: signal.Signals) -> None:
    try:
        os.killpg(daemon.proc.pid, sig)  # the daemon leads its own session (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass
