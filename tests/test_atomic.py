"""save_atomic: the one atomic file save, keeping the old file's mode and owner."""

from __future__ import annotations

import os

import pytest

import dealerbox.atomic as atomic_module
from dealerbox.atomic import save_atomic

AS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="only root can give a file to another user")


def test_a_new_file_gets_new_mode_and_its_text(tmp_path):
    path = tmp_path / "a" / "b" / "state.json"
    save_atomic(path, "first\n")
    assert path.read_text(encoding="utf-8") == "first\n"
    assert path.stat().st_mode & 0o777 == 0o640
    other = tmp_path / "open.txt"
    save_atomic(other, "é\n", new_mode=0o604, sync=False)
    assert other.read_bytes() == "é\n".encode()
    assert other.stat().st_mode & 0o777 == 0o604


def test_a_rewrite_keeps_the_mode(tmp_path):
    path = tmp_path / "registry.toml"
    save_atomic(path, "old\n")
    path.chmod(0o600)
    save_atomic(path, "new\n", new_mode=0o644)
    assert path.read_text() == "new\n"
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["registry.toml"]


@AS_ROOT
def test_a_rewrite_by_root_keeps_the_owner(tmp_path):
    path = tmp_path / "registry.toml"
    save_atomic(path, "old\n")
    os.chown(path, 4242, 4343)
    save_atomic(path, "new\n")
    st = path.stat()
    assert (st.st_uid, st.st_gid) == (4242, 4343)
    assert path.read_text() == "new\n"


@AS_ROOT
def test_a_first_file_written_by_root_gets_its_folders_owner(tmp_path):
    folder = tmp_path / "box"
    folder.mkdir()
    os.chown(folder, 4242, 4343)
    save_atomic(folder / "cursor.json", "{}\n")
    st = (folder / "cursor.json").stat()
    assert (st.st_uid, st.st_gid) == (4242, 4343)


@pytest.mark.parametrize("broken", ["replace", "fsync"])
def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path, monkeypatch, broken):
    path = tmp_path / "registry.toml"
    save_atomic(path, "old\n")

    def fail(*args):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(atomic_module.os, broken, fail)
    with pytest.raises(OSError, match="No space"):
        save_atomic(path, "new\n")
    monkeypatch.undo()
    assert path.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["registry.toml"]


def test_a_failed_write_of_a_first_file_leaves_nothing(tmp_path, monkeypatch):
    def fail(*args):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(atomic_module.os, "fsync", fail)
    with pytest.raises(OSError):
        save_atomic(tmp_path / "new.toml", "text\n")
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
