"""Throwaway servers for one benchmark run: Redis (the embedded binary, with the project's
own BASE_CONFIG), PostgreSQL (Debian's binaries, on a unix socket) and gunicorn."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from articles.operations.embedded import EmbeddedRedis


def _pg_bin() -> Path:
    """BENCH_PG_BIN, else the newest of Debian's PostgreSQL versions installed."""
    if os.environ.get("BENCH_PG_BIN"):
        return Path(os.environ["BENCH_PG_BIN"])
    found = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return found[-1].parent if found else Path("/usr/lib/postgresql/15/bin")


PG_BIN = _pg_bin()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def redis_server(directory: Path, port: int = 0) -> EmbeddedRedis:
    """The project's embedded Redis (BASE_CONFIG: AOF everysec, compact encodings), with
    automatic AOF rewrites off so a rewrite of the bulk load does not land mid-benchmark.
    It listens on its unix socket and, with `port`, on 127.0.0.1:`port` too."""
    return EmbeddedRedis(
        directory,
        port=port,
        daemonize=False,
        extra_config='auto-aof-rewrite-percentage 0\nsave ""\n',
    )


class Postgres:
    """A PostgreSQL cluster in `directory`, listening only on a unix socket there."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.data = directory / "data"
        self.log = directory / "postgres.log"

    @staticmethod
    def available() -> bool:
        return (PG_BIN / "initdb").exists() and (PG_BIN / "pg_ctl").exists()

    def _run(self, *args: str) -> None:
        # PostgreSQL refuses to run as root: run it as the Debian package's own user then.
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        result = subprocess.run(
            [*prefix, *args], check=False, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        if result.returncode:
            raise RuntimeError(f"{args[0]} failed: {result.stderr.decode()[-500:]}")

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            shutil.chown(self.directory, "postgres", "postgres")
            self.directory.parent.chmod(0o755)
        self._run(str(PG_BIN / "initdb"), "-D", str(self.data), "-U", "bench", "-A", "trust")
        # synchronous_commit off: a commit is acknowledged before its WAL is flushed, the
        # same promise as Redis' appendfsync everysec (a crash may lose the last moment).
        options = (
            f"-c listen_addresses='' -c unix_socket_directories='{self.directory}' "
            "-c synchronous_commit=off -c shared_buffers=256MB -c max_connections=50"
        )
        self._run(
            str(PG_BIN / "pg_ctl"),
            "-D",
            str(self.data),
            "-l",
            str(self.log),
            "-o",
            options,
            "-w",
            "start",
        )

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            with contextlib.suppress(RuntimeError):
                self._run(str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w", "stop")


ROOT = Path(__file__).resolve().parent.parent


class Gunicorn:
    """gunicorn serving votesite with production settings (DEBUG off, whitenoise) plus the
    benchmark's fixed-JSON view, on 127.0.0.1:`port`; or, with `app`, another project
    (the plain Django baseline) in the same way. Both read the project's gunicorn.conf.py
    (gthread workers, threads, timeouts); the options given here (address, worker count,
    backlog, log level) win over it, for both alike. What the server writes (votesite's
    request lines) goes to `log`, a file, as a deployment's would go to a pipe."""

    def __init__(
        self,
        port: int,
        env: dict[str, str],
        workers: int = 2,
        app: str = "votesite.wsgi:application",
        log: Path | None = None,
        config: str = "gunicorn.conf.py",
        ready: str = "/bench/fixed/",
    ) -> None:
        self.port = port
        self.env = env
        self.workers = workers
        self.app = app
        self.log = log
        self.config = config  # the live endpoint's: gunicorn.live.conf.py (uvicorn workers)
        self.ready = ready  # a path that answers 200 once the site is up
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 30.0) -> None:
        command = [
            sys.executable,
            "-m",
            "gunicorn",
            "--config",
            str(ROOT / self.config),
            self.app,
            "--bind",
            f"127.0.0.1:{self.port}",
            "--workers",
            str(self.workers),
            "--backlog",
            "256",
            "--log-level",
            "warning",
            "--access-logfile",
            "-" if os.environ.get("BENCH_ACCESS_LOG") else "/dev/null",
        ]
        output = self.log.open("ab") if self.log is not None else None
        try:
            self.process = subprocess.Popen(
                command, env=self.env, start_new_session=True, stderr=output
            )
        finally:
            if output is not None:
                output.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}{self.ready}") as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
            if self.process.poll() is not None:
                raise RuntimeError("gunicorn exited at start")
        raise RuntimeError("gunicorn did not answer")

    def worker_stats(self) -> dict[int, list[str]]:
        """Each worker's /proc/<pid>/stat fields after the command name, by pid."""
        found = {}
        if self.process is None:
            return found
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == self.process.pid:  # its parent: the master
                    found[int(stat.parent.name)] = fields
        return found

    def worker_cpu(self) -> float:
        """CPU seconds (user + system) its workers have used so far, from /proc."""
        total = sum(int(f[11]) + int(f[12]) for f in self.worker_stats().values())
        return total / os.sysconf("SC_CLK_TCK")  # utime, stime above

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        self.process = None


def remove(directory: Path) -> None:
    shutil.rmtree(directory, ignore_errors=True)
