"""Run a throwaway PostgreSQL cluster from Debian's packages, for tests, the
bench and a technician's bench setup.

A casino group's database team runs the real PostgreSQL; this module only
starts one that behaves the same way on one machine: Debian's own server
binaries, a fresh cluster in a temporary directory, listening on a loopback
port and on a socket in that directory, password authentication
(scram-sha-256) for the one role it creates. PostgreSQL refuses to run as
root, so when the tests run as root the cluster belongs to Debian's
``postgres`` user (or ``nobody`` where that user does not exist).

:meth:`PostgresCluster.kill` sends SIGKILL to the postmaster and its backends,
as a power cut would, and :meth:`PostgresCluster.start` brings it back on the
same port with the same data: PostgreSQL's crash recovery is part of what the
tests prove.
"""

from __future__ import annotations

import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from dealerbox.errors import FloorError
from dealerbox.floor.operating.broker import free_port, stop_process

__all__ = ["PostgresCluster", "find_server_binaries", "unavailable_reason"]

DEBIAN_LIB = Path("/usr/lib/postgresql")


def find_server_binaries(root: Path = DEBIAN_LIB) -> Path | None:
    """The newest Debian PostgreSQL server's ``bin`` directory, or None."""
    found = []
    for candidate in root.glob("*/bin"):
        if (candidate / "initdb").exists() and (candidate / "postgres").exists():
            try:
                found.append((int(candidate.parent.name), candidate))
            except ValueError:
                continue
    return max(found)[1] if found else None


def _service_user() -> pwd.struct_passwd | None:
    """Who runs the cluster: None for the current user, else an unprivileged account."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise FloorError("running as root and neither 'postgres' nor 'nobody' exists "
                     "to own a PostgreSQL cluster")


def unavailable_reason() -> str | None:
    """Why no cluster can be started here (for a test's skip), or None."""
    if find_server_binaries() is None:
        return (f"PostgreSQL server binaries not found under {DEBIAN_LIB} "
                "(Debian package: postgresql; `make test` installs it when run as root)")
    return None


def _children(pid: int) -> list[int]:
    """The processes whose parent is *pid* (from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone while listing
        # The command name may hold spaces and parentheses: the fields follow the last ')'.
        fields = text[text.rindex(")") + 2:].split()
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _alive(pid: int) -> bool:
    """Whether *pid* still runs; a zombie has let go of its memory and counts as gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2:].split()[0] != "Z"


class PostgresCluster:
    """A PostgreSQL server on a free loopback port with one database and one role.

    A context manager. :attr:`url` is the SQLAlchemy URL of the database
    (``postgresql+psycopg://``). The cluster's files live in a fresh temporary
    directory that :meth:`close` removes.
    """

    ROLE = "dealerbox"
    DATABASE = "dealerbox"

    def __init__(self, *, port: int | None = None, binaries: Path | None = None):
        self.binaries = binaries or find_server_binaries()
        if self.binaries is None:
            raise FloorError(unavailable_reason())
        self.port = port or free_port()
        self.password = secrets.token_urlsafe(18)
        self.owner = _service_user()
        self.base = Path(tempfile.mkdtemp(prefix="dealerbox-pg-"))
        self.data = self.base / "data"
        self.socket_dir = self.base / "run"
        self.log = self.base / "postgres.log"
        self.proc: subprocess.Popen | None = None
        self._initialised = False

    @property
    def url(self) -> str:
        return (f"postgresql+psycopg://{self.ROLE}:{self.password}"
                f"@127.0.0.1:{self.port}/{self.DATABASE}")

    def _run_as_owner(self) -> dict:
        if self.owner is None:
            return {}
        return {"user": self.owner.pw_uid, "group": self.owner.pw_gid, "extra_groups": []}

    def _initdb(self) -> None:
        self.socket_dir.mkdir()
        pwfile = self.base / "pwfile"
        pwfile.write_text(self.password + "\n")
        if self.owner is not None:
            for path in (self.base, self.socket_dir, pwfile):
                os.chown(path, self.owner.pw_uid, self.owner.pw_gid)
        proc = subprocess.run(
            [str(self.binaries / "initdb"), "-D", str(self.data), "-U", self.ROLE,
             "--pwfile", str(pwfile), "--auth=scram-sha-256", "-E", "UTF8",
             "--locale=C", "--no-instructions"],
            capture_output=True, text=True, cwd=self.base, **self._run_as_owner())
        pwfile.unlink()
        if proc.returncode != 0:
            raise FloorError(f"initdb failed: {proc.stderr.strip()[-2000:]}")
        self._initialised = True

    def start(self, timeout: float = 60.0) -> "PostgresCluster":
        """Start the server (creating the cluster and the database the first time)."""
        if not self._initialised:
            self._initdb()
        log = open(self.log, "ab")
        if self.owner is not None:
            os.chown(self.log, self.owner.pw_uid, self.owner.pw_gid)
        with log:
            self.proc = subprocess.Popen(
                [str(self.binaries / "postgres"), "-D", str(self.data),
                 "-p", str(self.port), "-k", str(self.socket_dir),
                 "-c", "listen_addresses=127.0.0.1", "-c", "max_connections=200",
                 "-c", "fsync=on", "-c", "synchronous_commit=on"],
                stdout=log, stderr=log, start_new_session=True, cwd=self.base,
                **self._run_as_owner())
        self._wait_ready(timeout)
        self._ensure_database()
        return self

    def _wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise FloorError(f"postgres exited with {self.proc.returncode}: "
                                 f"{self.log.read_text(errors='replace')[-2000:]}")
            ready = subprocess.run(
                [str(self.binaries / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port),
                 "-d", "postgres", "-U", self.ROLE], capture_output=True)
            if ready.returncode == 0:
                return
            if time.monotonic() > deadline:
                raise FloorError(f"postgres did not accept connections on port {self.port}")
            time.sleep(0.1)

    def _ensure_database(self) -> None:
        env = dict(os.environ, PGPASSWORD=self.password)
        psql = shutil.which("psql") or str(self.binaries / "psql")
        exists = subprocess.run(
            [psql, "-h", "127.0.0.1", "-p", str(self.port), "-U", self.ROLE, "-d", "postgres",
             "-tAc", f"SELECT 1 FROM pg_database WHERE datname = '{self.DATABASE}'"],
            capture_output=True, text=True, env=env)
        if exists.returncode != 0:
            raise FloorError(f"psql failed: {exists.stderr.strip()}")
        if exists.stdout.strip() != "1":
            created = subprocess.run(
                [str(self.binaries / "createdb"), "-h", "127.0.0.1", "-p", str(self.port),
                 "-U", self.ROLE, self.DATABASE], capture_output=True, text=True, env=env)
            if created.returncode != 0:
                raise FloorError(f"createdb failed: {created.stderr.strip()}")

    #: The role :meth:`database` gives its databases to: no superuser, as a database team's
    #: role for the floor would be (it owns its database and nothing else).
    FLOOR_ROLE = "dealerbox_floor"

    def database(self, name: str) -> str:
        """A new, empty database *name* (dropped first if it exists) owned by
        :attr:`FLOOR_ROLE`; the URL that signs in as that role."""
        from sqlalchemy import create_engine
        base = self.url.rsplit("@", 1)[1].rsplit("/", 1)[0]
        admin = create_engine(self.url.rsplit("/", 1)[0] + "/postgres", isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                if not conn.exec_driver_sql(f"SELECT 1 FROM pg_roles WHERE rolname = '{self.FLOOR_ROLE}'").first():
                    conn.exec_driver_sql(f'CREATE ROLE "{self.FLOOR_ROLE}" LOGIN NOSUPERUSER NOCREATEDB '
                                         f"NOCREATEROLE PASSWORD '{self.password}'")
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
                conn.exec_driver_sql(f'CREATE DATABASE "{name}" OWNER "{self.FLOOR_ROLE}"')
        finally:
            admin.dispose()
        return f"postgresql+psycopg://{self.FLOOR_ROLE}:{self.password}@{base}/{name}"

    def accepting(self) -> bool:
        """Whether something accepts TCP connections on the cluster's port."""
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
            return True
        except OSError:
            return False

    def kill(self) -> None:
        """SIGKILL the postmaster and every process it started (a power cut), and wait
        until none of them is left."""
        if self.proc is not None and self.proc.poll() is None:
            # Each backend makes itself a session leader (setsid), so the postmaster's
            # process group is the postmaster alone; a backend that outlives it keeps the
            # shared memory attached, and the next start refuses the data directory
            # ("pre-existing shared memory block is still in use"). Stopped first, the
            # postmaster forks nothing between the listing of its children and the kill.
            os.kill(self.proc.pid, signal.SIGSTOP)
            children = _children(self.proc.pid)
            for pid in children:
                _signal(pid, signal.SIGKILL)
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
            deadline = time.monotonic() + 30
            while any(_alive(pid) for pid in children):
                if time.monotonic() > deadline:
                    raise FloorError(f"postgres' processes {sorted(p for p in children if _alive(p))} "
                                     "outlived SIGKILL for 30 s")
                time.sleep(0.02)
        self.proc = None

    def stop(self) -> None:
        """A fast shutdown (SIGINT): clients are disconnected, data is flushed."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                stop_process(self.proc)
        self.proc = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server and remove its files."""
        self.stop()
        shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> "PostgresCluster":
        return self.start() if self.proc is None else self

    def __exit__(self, *exc) -> None:
        self.close()
