"""atomic_write leaves the permissions a normally created file would get (not mkstemp's 0600)."""
import os
import stat
import sys

import pytest

from prvgui.document import fileio

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")


@pytest.fixture
def umask():
    def set_(mask):
        old = os.umask(mask)
        restore.append(old)
    restore: list[int] = []
    yield set_
    if restore:
        os.umask(restore[0])


def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


@pytest.mark.parametrize("mask, expected", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664), (0o027, 0o640)])
def test_a_new_file_gets_0666_masked_by_the_umask(tmp_path, umask, mask, expected):
    umask(mask)
    assert fileio._umask() == mask
    path = tmp_path / "new.json"
    fileio.atomic_write(path, "{}")
    assert mode(path) == expected
    assert path.read_text() == "{}"
    assert [p.name for p in tmp_path.iterdir()] == ["new.json"]  # no temporary file left


def test_overwriting_keeps_the_existing_files_mode(tmp_path, umask):
    umask(0o022)
    path = tmp_path / "kept.csv"
    path.write_text("old")
    os.chmod(path, 0o640)
    fileio.atomic_write(path, b"new")
    assert mode(path) == 0o640 and path.read_bytes() == b"new"
    os.chmod(path, 0o604)
    fileio.atomic_write(path, "newer")
    assert mode(path) == 0o604 and path.read_text() == "newer"


def test_the_write_is_still_atomic_through_a_temporary_file_in_the_same_folder(tmp_path, monkeypatch):
    path = tmp_path / "x.json"
    path.write_text("before")
    seen = []
    real_replace = os.replace

    def replace(src, dst):
        seen.append((os.path.dirname(src), os.path.basename(src), mode(src)))
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError):
        fileio.atomic_write(path, "after")
    monkeypatch.setattr(os, "replace", real_replace)
    assert path.read_text() == "before"  # the target is untouched when the rename fails
    assert seen and seen[0][0] == str(tmp_path) and seen[0][1].startswith(".prvgui-")
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]  # the temporary file is removed


def test_umask_fallback_without_proc(monkeypatch, umask):
    umask(0o027)
    real_open = open

    def no_proc(name, *a, **k):
        if str(name).startswith("/proc"):
            raise OSError("no /proc")
        return real_open(name, *a, **k)
    monkeypatch.setattr("builtins.open", no_proc)
    assert fileio._umask() == 0o027
    assert os.umask(0o027) == 0o027  # the fallback put the umask back


def test_a_target_that_cannot_be_written_says_why_and_leaves_nothing(tmp_path, monkeypatch):
    """A folder, a missing folder, or a failing disk: a WriteError that names the path and why
    (str for a command line, strerror for a dialog beside the path), and no temporary file left
    in the target's folder or its parent (the target's own dirname, for a folder)."""
    with pytest.raises(fileio.WriteError) as got:
        fileio.atomic_write(tmp_path / "sub", "x") if (tmp_path / "sub").mkdir() is None else None
    assert str(got.value) == f"cannot write {tmp_path / 'sub'}: it is a folder, not a file name"
    assert got.value.strerror == "it is a folder, not a file name"
    missing = tmp_path / "no" / "x.json"
    with pytest.raises(fileio.WriteError, match=f"cannot write {missing}: the folder {tmp_path / 'no'} does not exist"):
        fileio.atomic_write(missing, "x")
    monkeypatch.setattr(os, "fsync", lambda fd: (_ for _ in ()).throw(OSError(28, "No space left on device")))
    with pytest.raises(fileio.WriteError, match="cannot write .*x.json: No space left on device"):
        fileio.atomic_write(tmp_path / "x.json", "x")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["sub"]
