"""Saved compositions and exported plots get the user's umask, not mkstemp's 0600 (issue 15, item 9)."""
import os
import stat
import sys

import pytest

pytestmark = [pytest.mark.gui,
              pytest.mark.skipif(sys.platform == "win32", reason="POSIX permission bits")]


def test_saves_and_exports_follow_the_umask(qtbot, window, load, tmp_path):
    old = os.umask(0o022)
    try:
        load(window)
        path = tmp_path / "saved.json"
        assert window.files.save_as(path), window.errors
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o644
        assert window.export_plot(window.plots["profile"], "csv"), window.errors
        assert stat.S_IMODE(os.stat(tmp_path / "profile.csv").st_mode) == 0o644
        os.chmod(path, 0o600)  # the user made it private: saving again keeps that
        assert window.files.save_as(path), window.errors
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    finally:
        os.umask(old)
