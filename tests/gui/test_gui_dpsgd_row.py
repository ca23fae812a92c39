"""The DP-SGD helper opened on a subsampled Gaussian row starts from that row (issue 15, item 9)."""
import pytest

from prvgui.document.model import RowSpec
from prvgui.gui import dpsgd_helper
from prvgui.gui.dpsgd_helper import DpSgdDialog, dpsgd_schedule, settings_for_row

pytestmark = pytest.mark.gui


@pytest.fixture
def opened(monkeypatch):
    """Run open_dpsgd_helper; the dialog is captured and answered with ``answer`` (False: Cancel)."""
    seen = []

    def run(window, answer=False):
        def exec_(self):
            seen.append(self)
            self.grab().save("/tmp/dpsgd_on_row.png")
            return answer
        monkeypatch.setattr(DpSgdDialog, "exec", exec_)
        window.open_dpsgd_helper()
        return seen[-1]
    return run


def shown(dialog):
    return {k: dialog.values()[k] for k in ("dataset", "batch", "epochs", "sigma")}


def test_the_helper_starts_from_the_selected_rows_q_count_and_sigma(qtbot, window, load, opened):
    row = RowSpec("subsampled_gaussian", {"sigma": 0.9, "sampling_rate": 0.002, "sensitivity": 1.0},
                  12345, "my training run")  # not what the helper's defaults (60000, 256, 60) give
    load(window, rows=[row])
    window.composition.select_row(0)
    window.apply_dpsgd(row, {"dataset": 60000, "batch": 120, "epochs": 24.69})  # remembered: N 60000
    dialog = opened(window, answer=True)
    v = shown(dialog)
    assert v["sigma"] == 0.9
    assert dpsgd_schedule(v["dataset"], v["batch"], v["epochs"]) == (0.002, 12345)
    assert "row 1" in dialog.buttons.buttons()[0].text() or "row 1" in dialog.buttons.buttons()[1].text()
    # applying what it showed changes nothing: q, count, sigma and the user's label stay
    assert window.doc.row(0) == row and window.stack.count() == 0


def test_the_helper_asks_for_the_dataset_instead_of_inventing_one(qtbot, window, load, opened):
    """Issue 31: a q = 0.01 x 3000 row said nothing of N; the helper made up N = 100, batch 1."""
    row = RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0},
                  3000, "training")
    load(window, rows=[row])
    window.composition.select_row(0)
    dialog = opened(window)
    assert dialog.fields["dataset"].text() == "" and dialog.fields["batch"].text() == ""
    assert dialog.fields["epochs"].text() == "30"  # what the row does say: 3000 steps at q = 0.01
    assert not dialog.ask.isHidden() and "enter the dataset size N" in dialog.ask.text()
    assert "the field is empty" in dialog.error_label.text() and "null" not in dialog.error_label.text()
    assert not dialog.buttons.buttons()[0].isEnabled() or not dialog.buttons.buttons()[1].isEnabled()


def test_remembered_settings_that_give_the_row_are_used(qtbot, window, load, opened):
    load(window)  # row 0: sigma 2, q 0.05, 200 steps
    window.composition.select_row(0)
    window.apply_dpsgd(RowSpec("subsampled_gaussian", {"sigma": 2.0, "sampling_rate": 0.05,
                                                       "sensitivity": 1.0}, 200, "x"),
                       {"dataset": 1000, "batch": 50, "epochs": 10})
    dialog = opened(window)
    assert shown(dialog) == {"dataset": 1000, "batch": 50, "epochs": 10, "sigma": 2.0}
    # remembered settings for another schedule: the row's q and count still win, N is kept
    window.composition.select_row(0)
    window.apply_dpsgd(RowSpec("subsampled_gaussian", {"sigma": 2.0, "sampling_rate": 0.05,
                                                       "sensitivity": 1.0}, 200, "x"),
                       {"dataset": 4000, "batch": 64, "epochs": 3})
    dialog = opened(window)
    assert shown(dialog) == {"dataset": 4000, "batch": 200, "epochs": 10, "sigma": 2.0}


def test_an_invalid_row_opens_the_helper_with_remembered_values_and_the_rows_sigma(qtbot, window, load,
                                                                                  opened):
    load(window)
    window.composition.select_row(0)
    window.composition.form.params["sampling_rate"].edit.setText("2")  # not a rate
    window.doc.replace(0, window.doc.row(0).with_param("sampling_rate", 2.0))
    dialog = opened(window)
    assert shown(dialog) == {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": 2.0}


def test_the_helpers_own_label_is_replaced_the_users_is_kept(qtbot, window, load):
    load(window)
    window.composition.select_row(0)
    new = RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 1.0}, 100,
                  "DP-SGD: N=100, batch 1, 1 epochs")
    window.apply_dpsgd(new, {"dataset": 100, "batch": 1, "epochs": 1})
    assert window.doc.row(0).label == "training"
    window.doc.replace(0, RowSpec(new.kind, new.params, 100, "DP-SGD: old"))
    window.apply_dpsgd(new, {"dataset": 100, "batch": 1, "epochs": 1})
    assert window.doc.row(0).label == new.label


@pytest.mark.parametrize("q, count", [(0.05, 200), (256 / 60000, 14063), (0.3, 7), (1.0, 5), (1e-6, 3),
                                      (0.123456789, 1000)])
def test_settings_for_row_reproduce_q_and_count(q, count):
    got = settings_for_row(q, count, {})  # no dataset size known: only what the row says
    assert got["dataset"] is None and got["batch"] is None
    assert got["epochs"] == pytest.approx(q * count, rel=1e-11)
    n = 10**6  # a remembered N that gives q exactly is used
    if (n * q) == int(n * q):
        got = settings_for_row(q, count, {"dataset": n})
        assert dpsgd_schedule(got["dataset"], got["batch"], got["epochs"]) == (q, count)


@pytest.mark.parametrize("q, count", [(float("nan"), 3), ("x", 3), (0.0, 3), (2.0, 3), (0.1, 0),
                                      (0.1, 1.5), (None, None)])
def test_settings_for_row_refuses_bad_rows(q, count):
    assert settings_for_row(q, count, {"dataset": "junk"}) is None
    assert dpsgd_helper.settings_for_row(q, count, {}) is None
