"""The floor tests' shared fixtures: the casino PKI, a real mosquitto, a throwaway
PostgreSQL. Here, so that every module of tests/floor shares them (a fixture
imported into a module is that module's own: a PKI per module, made again).

tests/floor/support.py re-exports ``pki``, ``broker``, ``need`` and ``TABLES`` for
the tests outside this folder that import them by name.
"""

from __future__ import annotations

import os
import shutil

import pytest

from dealerbox.floor.operating.broker import Broker, make_pki
from tests.conftest import worker_free_port

TABLES = ("T01", "T02", "T03")


def need(binary: str, package: str) -> str:
    """The path of *binary*; skip the test when it is missing (fail it on CI, where it must be)."""
    path = shutil.which(binary) or (f"/usr/sbin/{binary}" if os.path.exists(f"/usr/sbin/{binary}") else None)
    if path is None:
        message = f"{binary} is not installed (Debian package: {package})"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    """A CA (the shipped make-ca.sh) with the broker's certificate and the tables' and the
    floor's client certificates; 'floor-revoked' is test_security's to revoke."""
    need("openssl", "openssl")
    return make_pki(tmp_path_factory.mktemp("pki"),
                    [*TABLES, "floor-collector", "floor-collector-2", "floor-collector-3", "floor-view",
                     "floor-revoked"])


@pytest.fixture
def broker(tmp_path, pki):
    """A mosquitto with the shipped config on a loopback port of this worker's own."""
    need("mosquitto", "mosquitto")
    b = Broker(tmp_path / "broker", pki, port=worker_free_port())
    b.directory.mkdir()
    with b:
        yield b


@pytest.fixture(scope="session")
def postgres_cluster():
    """One throwaway PostgreSQL (Debian's server binaries) for the session; tests take
    databases of their own from it (``postgres_cluster.database(name)``). Each xdist
    worker has a cluster of its own (tests kill and restart it): its own data directory
    and socket (PostgresCluster makes a fresh temporary directory), a port of its own."""
    from dealerbox.floor.operating.pgcluster import PostgresCluster, unavailable_reason
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with PostgresCluster(port=worker_free_port()) as cluster:
        yield cluster
