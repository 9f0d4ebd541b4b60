"""The throwaway PostgreSQL cluster the floor's tests and bench start."""

import subprocess

import psycopg
import pytest

from dealerbox.floor.operating import pgcluster

pytestmark = pytest.mark.skipif(pgcluster.unavailable_reason() is not None,
                                reason=str(pgcluster.unavailable_reason()))


def _psql(cluster, sql):
    url = cluster.url.replace("postgresql+psycopg://", "postgresql://")
    return subprocess.run(["psql", url, "-tAc", sql], capture_output=True, text=True)


def test_a_cluster_keeps_committed_rows_through_a_sigkill():
    with pgcluster.PostgresCluster() as cluster:
        assert _psql(cluster, "CREATE TABLE t (n int); INSERT INTO t VALUES (7)").returncode == 0
        cluster.kill()
        assert not cluster.accepting()
        cluster.start()
        assert _psql(cluster, "SELECT n FROM t").stdout.strip() == "7"
    assert not cluster.base.exists()


def test_a_kill_leaves_no_backend_behind_and_the_server_starts_again_at_once():
    """A backend outliving its postmaster keeps the shared memory attached, and PostgreSQL
    refuses to start on that data directory: kill() returns only once every one is gone."""
    with pgcluster.PostgresCluster() as cluster:
        url = cluster.url.replace("postgresql+psycopg://", "postgresql://")
        idle, in_transaction = psycopg.connect(url, autocommit=True), psycopg.connect(url)
        backends = [c.execute("SELECT pg_backend_pid()").fetchone()[0] for c in (idle, in_transaction)]
        in_transaction.execute("CREATE TABLE t (n int)")
        cluster.kill()
        assert not any(pgcluster._alive(pid) for pid in backends)
        for connection in (idle, in_transaction):
            connection.close()  # the server is gone: nothing to say goodbye to
        cluster.start()
        assert _psql(cluster, "SELECT 1").stdout.strip() == "1"


def test_a_wrong_password_is_refused():
    with pgcluster.PostgresCluster() as cluster:
        url = f"postgresql://{cluster.ROLE}:wrong@127.0.0.1:{cluster.port}/{cluster.DATABASE}"
        proc = subprocess.run(["psql", url, "-tAc", "SELECT 1"], capture_output=True, text=True)
        assert proc.returncode != 0
        assert "password authentication failed" in proc.stderr


def test_no_server_binaries_gives_a_reason(tmp_path):
    assert pgcluster.find_server_binaries(tmp_path) is None
