"""docs/floor/postgresql.md, the database team's page, says what the code does: the SQL it gives
runs as written and leaves a role the floor migrates with, its URLs load, and the
figures it reads from the code are the code's."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GROUP = ROOT / "docs" / "floor" / "postgresql.md"


def text() -> str:
    return GROUP.read_text(encoding="utf-8")


def section(title: str, level: str = "##") -> str:
    """The text under the heading *title* up to the next heading of its level or higher."""
    lines = text().split("\n")
    start = lines.index(f"{level} {title}")
    fenced = False
    for end in range(start + 1, len(lines)):
        if lines[end].startswith("```"):
            fenced = not fenced
        heading = re.match(r"(#+) ", lines[end])
        if not fenced and heading and len(heading.group(1)) <= len(level):
            break
    else:
        end = len(lines)
    return "\n" + "\n".join(lines[start:end]) + "\n"


def blocks(part: str, kind: str) -> list[str]:
    return re.findall(rf"^```{kind}\n(.*?)^```", part, re.S | re.M)


def test_the_database_comes_before_anything_that_uses_it():
    doc = text()
    assert doc.index("\n## The database\n") < doc.index("\n## The store: PostgreSQL\n")
    assert doc.index("\n## The database\n") < doc.index("\n## Moving a SQLite floor store to PostgreSQL\n")
    # The role and the database are made in the database's own part, nowhere else.
    start = doc.index("\n## The database\n")
    end = start + len(section("The database"))
    made = [m.start() for m in re.finditer(r"CREATE (ROLE|DATABASE)", doc)]
    assert made and all(start < at < end for at in made)


def test_the_pool_figures_are_the_codes():
    from dealerbox.floor.store import engine
    source = Path(engine.__file__).read_text(encoding="utf-8")
    pool = re.search(r"pool_size=(\d+), max_overflow=(\d+)", source)
    assert pool, "store_engine's pool settings moved: check postgresql.md's connection figures"
    part = section("Connections, for `max_connections`", "###")
    assert f"pool_size={pool.group(1)}, max_overflow={pool.group(2)}" in part
    per_web = 2 + int(pool.group(1)) + int(pool.group(2))  # the store, the live watcher, the figures' pool
    assert f"| a web view | {per_web} |" in part
    assert f"`3 × collectors + {per_web} × web views + 2`" in part
    limit = int(re.search(r"CONNECTION LIMIT (\d+)", text()).group(1))
    assert limit >= 3 * 3 + per_web * 2 + 2, "the role's CONNECTION LIMIT is below three collectors and two views"


def test_the_minimum_version_names_what_the_code_asks_for():
    from dealerbox.floor.store import connection, lines
    code = Path(connection.__file__).read_text(encoding="utf-8") + Path(lines.__file__).read_text(encoding="utf-8")
    part = section("Which PostgreSQL", "###")
    assert "pg_current_wal_insert_lsn()" in code and "`pg_current_wal_insert_lsn()`" in part
    assert "skip_locked=True" in code and "SKIP LOCKED" in part
    assert "ON CONFLICT" in code and "ON CONFLICT" in part
    assert "at least PostgreSQL 10" in part


def test_every_store_url_in_the_doc_loads(tmp_path):
    from dealerbox.floor.operating.settings import load_web
    from sqlalchemy.engine import make_url
    found = [b for b in blocks(text(), "toml") if "[store]" in b]
    assert len(found) >= 3
    for i, block in enumerate(found):
        url = tomllib.loads(block)["store"]["url"]
        path = tmp_path / f"floor-{i}.toml"
        path.write_text(block, encoding="utf-8")
        assert load_web(path).store == url
    multi = [b for b in found if "target_session_attrs=read-write" in b]
    assert multi and make_url(tomllib.loads(multi[0])["store"]["url"]).host == "db1.group.example,db2.group.example"


def test_the_hba_lines_take_tls_and_scram_only():
    part = section("pg_hba.conf", "###")
    rows = [line.split() for b in blocks(part, "") for line in b.splitlines() if line and not line.startswith("#")]
    assert rows
    for row in rows:
        assert row[0] == "hostssl" and row[1:3] == ["dealerbox_floor", "dealerbox_floor"] \
            and row[4] == "scram-sha-256", row


@pytest.fixture(scope="module")
def postgres_cluster():
    """A throwaway PostgreSQL (Debian's server binaries), as tests/floor/conftest.py starts one."""
    from dealerbox.floor.operating.pgcluster import PostgresCluster, unavailable_reason
    from tests.conftest import worker_free_port
    reason = unavailable_reason()
    if reason:
        pytest.skip(reason)
    with PostgresCluster(port=worker_free_port()) as cluster:
        yield cluster


def _psql(cluster, user: str, password: str, database: str, script: str, cwd: Path):
    psql = shutil.which("psql") or str(cluster.binaries / "psql")
    return subprocess.run([psql, "-X", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1", "-p", str(cluster.port),
                           "-U", user, "-d", database, "-f", "-"], input=script, capture_output=True, text=True,
                          cwd=cwd, env=dict(os.environ, PGPASSWORD=password), timeout=60)


def test_the_database_teams_sql_runs_as_written_and_the_floor_migrates_as_its_role(postgres_cluster, tmp_path):
    """The role's SQL (one \\password typed for the test), then the store made and migrated by
    that role, then the archive-and-delete of old lines run as it, as the doc writes them."""
    from sqlalchemy import create_engine, text as sql
    from dealerbox.floor.migrations import current, head
    from dealerbox.floor.store import Store

    name = f"floor_doc_{secrets.token_hex(3)}"   # the cluster is shared: a role and database of the test's own
    password = secrets.token_urlsafe(12)
    setup = blocks(section("The role and the database", "###"), "sql")[0]
    assert "\\password dealerbox_floor" in setup
    setup = setup.replace("\\password dealerbox_floor", f"ALTER ROLE dealerbox_floor PASSWORD '{password}';")
    done = _psql(postgres_cluster, postgres_cluster.ROLE, postgres_cluster.password, "postgres",
                 setup.replace("dealerbox_floor", name), tmp_path)
    assert done.returncode == 0, done.stderr
    url = f"postgresql://{name}:{password}@127.0.0.1:{postgres_cluster.port}/{name}"
    with Store(url) as store:
        assert current(store.engine) == head()
        store.data_version()   # the function the minimum version is for, allowed to the role
    engine = create_engine(url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.begin() as conn:
            assert not conn.execute(sql("SELECT rolsuper OR rolcreatedb OR rolcreaterole FROM pg_roles "
                                        "WHERE rolname = current_user")).scalar()
            for seq, days in ((1, 500), (2, 450), (3, 10)):
                conn.execute(sql("INSERT INTO lines (table_id, seq, line, hash, chain_ok, committed) "
                                 "VALUES ('T01', :s, '{}', 'h', 1, extract(epoch FROM now()) - :d * 86400)"),
                             {"s": seq, "d": days})
        archive = blocks(section("Growth of the store, and what to keep", "###"), "sql")[0]
        done = _psql(postgres_cluster, name, password, name, archive, tmp_path)
        assert done.returncode == 0, done.stderr
        with engine.connect() as conn:
            assert conn.execute(sql("SELECT seq FROM lines ORDER BY seq")).scalars().all() == [3]
        assert (tmp_path / "lines-archive.csv").read_text().count("\n") == 3   # a header and two lines
    finally:
        engine.dispose()
    # Another role may not connect to the floor's database.
    other = _psql(postgres_cluster, postgres_cluster.ROLE, postgres_cluster.password, "postgres",
                  f"CREATE ROLE {name}_other LOGIN PASSWORD 'x';", tmp_path)
    assert other.returncode == 0, other.stderr
    refused = _psql(postgres_cluster, f"{name}_other", "x", name, "SELECT 1;", tmp_path)
    assert refused.returncode != 0 and "CONNECT privilege" in refused.stderr
