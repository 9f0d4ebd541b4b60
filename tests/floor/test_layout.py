"""Where the tables stand in the room (dealerbox/floor/store/layout.py, migration 0009):
set, moved and removed by an admin with ``dealerbox floor layout``, on SQLite and on
PostgreSQL, and when the floor filed each table's newest line."""

from __future__ import annotations

import subprocess
import sys
import uuid

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext

from dealerbox.floor import migrations as M
from dealerbox.floor.store import Store, store_engine
from dealerbox.floor.store.layout import LAYOUT, PLACE_MAX

from tests.floor.test_collector import journal_lines


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path):
    """A new store's target on each backend."""
    if request.param == "sqlite":
        return tmp_path / "floor.sqlite"
    return request.getfixturevalue("postgres_cluster").database(f"floor_{uuid.uuid4().hex[:12]}")


def test_places_are_set_moved_listed_and_removed_and_the_schema_is_the_models(target):
    with Store(target) as store:
        assert M.current(store.engine) == M.head()
        with store.engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={
                "include_name": lambda name, kind, _p: kind != "table" or name in LAYOUT.tables})
            found = compare_metadata(context, LAYOUT)
        assert [d for d in found if not (isinstance(d, list) and d[0][0] == "modify_nullable")] == []
        assert store.table_places() == {}
        store.place_table("T07", "Pit 2", 1, 3, "ada", now=100.0)
        store.place_table("T01", "Pit 1", 1, 1, "ada", now=101.0)
        store.place_table("T02", " Pit 1 ", 1, 2, "ada", now=102.0)  # stripped
        places = store.table_places()
        assert list(places) == ["T01", "T02", "T07"]  # by pit, row, column
        assert places["T07"] == {"pit": "Pit 2", "row": 1, "col": 3, "changed": 100.0, "changed_by": "ada"}
        assert places["T02"]["pit"] == "Pit 1"
        # Two tables never share a place; a table may move to a free one (or stay where it is).
        with pytest.raises(ValueError, match="T01's place"):
            store.place_table("T07", "Pit 1", 1, 1, "ada")
        store.place_table("T01", "Pit 1", 1, 1, "root", now=103.0)
        moved = store.place_table("T07", "Pit 1", 2, 1, "root", now=104.0)
        assert moved == {"pit": "Pit 1", "row": 2, "col": 1, "changed": 104.0, "changed_by": "root"}
        for pit, row, col in (("", 1, 1), ("two\nlines", 1, 1), ("x" * 41, 1, 1), ("P", 0, 1),
                              ("P", 1, PLACE_MAX + 1), ("P", True, 1), ("P", 1.5, 1)):
            with pytest.raises(ValueError):
                store.place_table("T09", pit, row, col, "ada")
        assert "T09" not in store.table_places()
        assert store.unplace_table("T07") and not store.unplace_table("T07")
        assert list(store.table_places()) == ["T01", "T02"]


def test_the_newest_lines_time_is_the_line_at_the_tables_last_seq(target):
    with Store(target) as store:
        store.ensure_table("T01")
        store.ensure_table("T02")
        lines = journal_lines(3)
        rows = [("T01", i + 1, line, f"h{i}", True, 1000.0 + i) for i, line in enumerate(lines)]
        store.add_lines(rows)
        store.update_table("T01", last_seq=3, last_hash="h2", seen=2000.0)
        # T02 has no line: no time (a table never heard of writing is quiet from the start).
        assert store.last_line_times() == {"T01": 1002.0}


def test_a_store_at_0008_is_migrated_to_the_layout_on_opening(tmp_path):
    path = tmp_path / "floor.sqlite"
    # A store as 0008 left it, made by the migrations themselves: the revisions after 0009
    # find their own tables and columns missing, as in a store of that release.
    engine = store_engine(path)
    try:
        M.upgrade(engine, "0008")
        assert M.current(engine) == "0008"
        with engine.connect() as conn:
            names = {r[0] for r in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert "table_layout" not in names
    finally:
        engine.dispose()
    with Store(path) as store:
        assert M.current(store.engine) == M.head() and store.table_places() == {}
        store.place_table("T01", "Pit 1", 1, 1, "ada")
        assert set(store.table_places()) == {"T01"}


def _layout(config, *args):
    return subprocess.run([sys.executable, "-m", "dealerbox.cli", "floor", "layout", *args, "--config", str(config)],
                          capture_output=True, text=True)


def test_an_admin_lays_out_the_room_from_the_command_line(tmp_path):
    path = tmp_path / "floor.sqlite"
    with Store(path) as store:
        for t in ("T01", "T02", "T07", "T10"):
            store.ensure_table(t)
    config = tmp_path / "floor.toml"
    config.write_text(f'[store]\npath = "{path}"\n')
    done = _layout(config, "set", "T07", "--pit", "Pit 2", "--row", "1", "--col", "3")
    assert done.returncode == 0 and "T07 stands in Pit 2, row 1, column 3" in done.stderr, done.stderr
    assert _layout(config, "set", "T01", "--pit", "Pit 1", "--row", "1", "--col", "1").returncode == 0
    listed = _layout(config, "list")
    assert listed.returncode == 0
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("T01\tPit 1\trow 1\tcolumn 1\t(set by ")
    assert lines[1].startswith("T07\tPit 2\trow 1\tcolumn 3\t")
    assert lines[2] == "unplaced: T02 T10"
    taken = _layout(config, "set", "T02", "--pit", "Pit 1", "--row", "1", "--col", "1")
    assert taken.returncode == 2 and "Pit 1 row 1 column 1 is T01's place" in taken.stderr
    bad = _layout(config, "set", "T02", "--pit", "Pit 1", "--row", "0", "--col", "1")
    assert bad.returncode == 2 and "a row is a whole number from 1 to 50" in bad.stderr
    assert _layout(config, "set", "T02", "--pit", "Pit 1", "--row", "x", "--col", "1").returncode == 2
    odd = _layout(config, "set", "no/table", "--pit", "Pit 1", "--row", "1", "--col", "2")
    assert odd.returncode == 2 and "is no table id" in odd.stderr
    assert _layout(config, "remove", "T07").returncode == 0
    gone = _layout(config, "remove", "T07")
    assert gone.returncode == 2 and "T07 has no place" in gone.stderr
    assert _layout(config, "list").stdout.splitlines()[-1] == "unplaced: T02 T07 T10"
