"""The DP-SGD helper asks how batches are formed and who is protected, shows each scheme's ε side
by side before the row is added (computed by the engine's compute, here a fake injected through
``compute_fn``), and applies row and relation as one undo step (issue 11, item 4)."""
import threading
from types import SimpleNamespace

import pytest
from PySide6.QtWidgets import QDialogButtonBox

from prvgui.accounting.queries.certified import CertifiedUpper
from prvgui.accounting.core.errors import Cancelled
from prvgui.accounting.core.values import Bounds
from prvgui.document.model import Document, RowSpec, Targets
from prvgui.gui.dpsgd_helper import (SCHEMES, DpSgdDialog, dpsgd_row, initial_for_row, settings_for_shuffled,
                                     shuffled_schedule)

pytestmark = pytest.mark.gui

TIMEOUT = 30_000
#: Chua et al.'s example: σ = 0.8, one epoch of 1000 batches
CHUA = {"dataset": 60000, "batch": 60, "epochs": 1, "sigma": 0.8}
#: what the fake engine answers for each scheme (ε upper; shuffled also a proven lower bound)
ANSWERS = {"poisson": 0.47, "fixed_size": 0.93, "shuffled": (6.04, 9.5), "balls_in_bins": (0.39, 0.41),
           "truncated": (0.46, 0.48)}


class FakeEngine:
    """Stands for view_model.compute: answers at once, records the requests; with ``hold`` set
    (a dataset size), requests for that size wait until they are cancelled."""

    def __init__(self, hold=None):
        self.requests = []
        self.hold = hold
        self.cancelled = threading.Event()
        self.lock = threading.Lock()

    @staticmethod
    def scheme_of(request):
        mech = request.rows[0].mechanism
        if mech.kind == "shuffled_gaussian":
            return "shuffled"
        if mech.kind == "random_allocation":
            return "balls_in_bins"
        if mech.kind == "truncated_poisson":
            return "truncated"
        return mech.sampling

    def __call__(self, request, progress=None, cancel=None):
        with self.lock:
            self.requests.append(request)
        scheme = self.scheme_of(request)
        mech = request.rows[0].mechanism
        if self.hold is not None and getattr(mech, "sampling_rate", None) == 60 / self.hold:
            while not cancel():
                threading.Event().wait(0.002)
            self.cancelled.set()
            raise Cancelled("computation cancelled")
        answer = ANSWERS[scheme]
        if scheme in ("shuffled", "balls_in_bins", "truncated"):
            low, up = answer
            return SimpleNamespace(request=request, epsilon=Bounds(up - 0.01, up - 0.005, up),
                                   certified_upper=CertifiedUpper(up, "prv"), epsilon_at_least=low,
                                   poisson_epsilon=Bounds(0.46, 0.465, 0.47))
        return SimpleNamespace(request=request, epsilon=Bounds(answer - 0.01, answer - 0.005, answer),
                               certified_upper=CertifiedUpper(answer, "prv"), epsilon_at_least=None,
                               poisson_epsilon=None)

    def by_scheme(self):
        return {self.scheme_of(r): r for r in self.requests}


@pytest.fixture
def make(qtbot):
    dialogs = []

    def make_(initial=None, doc=None, engine=None, target="a new row", cost=None):
        doc = doc or Document(targets=Targets(1e-6, 1.0, 0.05))
        engine = engine or FakeEngine()
        dialog = DpSgdDialog(None, {**CHUA, **(initial or {})}, target, doc, engine, cost)
        qtbot.addWidget(dialog)
        dialogs.append(dialog)
        return dialog, engine
    yield make_
    for d in dialogs:
        d.shutdown()


def compare(qtbot, dialog):
    with qtbot.waitSignal(dialog.comparison_finished, timeout=TIMEOUT):
        dialog.compare_now()
    assert not dialog.is_comparing()
    return dialog.answers()


def test_the_comparison_shows_every_scheme_side_by_side(qtbot, make):
    dialog, engine = make()
    answers = compare(qtbot, dialog)
    assert answers == {"poisson": "≤ 0.47", "fixed_size": "≤ 0.93", "shuffled": "between 6.04 and 9.5",
                       "balls_in_bins": "between 0.39 and 0.41", "truncated": "between 0.46 and 0.48"}
    table = dialog.table
    assert [table.item(r, 0).text().split()[0] for r in range(5)] == ["Poisson", "Fixed", "Shuffled", "Balls-in-bins",
                                                                      "Truncated"]
    assert "δ = 1e-06" in table.horizontalHeaderItem(1).text()
    # each scheme is accounted as it would be once applied: fixed size under replace-one
    assert [table.item(r, 2).text() for r in range(5)] == [
        "add/remove one record", "replace one record", "add/remove one record", "add/remove one record",
        "add/remove one record"]
    requests = engine.by_scheme()
    assert set(requests) == set(SCHEMES)
    assert requests["fixed_size"].neighbouring == "replace_one"
    assert requests["poisson"].neighbouring == "add_remove" == requests["shuffled"].neighbouring
    for r in requests.values():
        assert r.delta == 1e-6 and r.eps_error == 0.05 and len(r.rows) == 1
        assert r.profile_points == 0 and not r.want_pld  # the ε only
    assert requests["poisson"].rows[0].count == 1000
    assert requests["shuffled"].rows[0].count == 1
    assert requests["shuffled"].rows[0].mechanism.batches_per_epoch == 1000
    assert "no tight accountant" in dialog.compare_note.text()


@pytest.mark.parametrize("scheme", SCHEMES)
def test_the_helper_builds_the_row_of_each_scheme(qtbot, make, scheme):
    dialog, _ = make()
    dialog.set_scheme(scheme)
    row = dialog.row()
    ok = dialog.buttons.button(QDialogButtonBox.StandardButton.Ok)
    assert ok.isEnabled()
    if scheme == "shuffled":
        assert row.kind == "shuffled_gaussian" and row.count == 1
        assert row.params == {"sigma": 0.8, "batches_per_epoch": 1000, "sensitivity": 1.0}
        assert "1\u202f000 batches per epoch" in dialog.summary.text()
    elif scheme == "truncated":
        assert row.kind == "truncated_poisson" and row.count == 1000
        assert row.params == {"dataset_size": 60000, "sampling_rate": 0.001, "max_batch": 120, "sigma": 0.8,
                              "sensitivity": 1.0}
        assert "at most 120 records per step" in dialog.summary.text()
    elif scheme == "balls_in_bins":
        assert row.kind == "random_allocation" and row.count == 1
        assert row.params == {"sigma": 0.8, "steps_per_epoch": 1000, "selected": 1, "sensitivity": 1.0}
        assert "1\u202f000 steps per epoch" in dialog.summary.text()
    else:
        assert row.kind == "subsampled_gaussian" and row.count == 1000
        assert row.params["sampling_rate"] == 0.001 and row.params["sigma"] == 0.8
        assert row.params.get("sampling", "poisson") == scheme
        assert ("fixed-size" in dialog.summary.text()) == (scheme == "fixed_size")
    assert row.error() is None
    # fixed size needs replace-one, and the dialog says so before anything is applied
    assert dialog.relation() == ("replace_one" if scheme == "fixed_size" else "add_remove", 1)
    note = dialog.relation_note.text()
    assert ("replace-one" in note and "for every row" in note) == (scheme == "fixed_size")
    # the chosen scheme is marked in the comparison
    chosen = [dialog.table.item(r, 0).text() for r in range(len(SCHEMES)) if "chosen" in dialog.table.item(r, 0).text()]
    assert len(chosen) == 1 and chosen[0].startswith({"poisson": "Poisson", "fixed_size": "Fixed",
                                                      "shuffled": "Shuffled", "balls_in_bins": "Balls",
                                                          "truncated": "Truncated"}[scheme])


def test_who_is_protected_sets_the_group_size_and_the_comparison(qtbot, make):
    dialog, engine = make()
    assert dialog.one_record.isChecked() and not dialog.group.isEnabled()
    dialog.user.setChecked(True)
    dialog.group.setText("4")
    assert dialog.relation() == ("add_remove", 4)
    assert "from 1 to 4" in dialog.relation_note.text()
    compare(qtbot, dialog)
    assert all(r.group_size == 4 for r in engine.requests[-3:])
    assert dialog.table.item(1, 2).text() == "replace one record, groups of 4 records"
    dialog.set_scheme("fixed_size")
    assert dialog.relation() == ("replace_one", 4)


@pytest.mark.parametrize("typed", ["0", "2.5", "1e9", "abc", ""])
def test_a_bad_k_names_the_field_and_blocks_apply(qtbot, make, typed):
    dialog, _ = make()
    dialog.user.setChecked(True)
    dialog.group.setText(typed)
    assert dialog.row() is None and dialog.relation() is None
    assert "Records per person must be" in dialog.error_label.text()
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()
    assert all(text.lower().startswith("— records per person") for text in dialog.answers().values())
    dialog.group.setText("3")
    assert dialog.row() is not None and dialog.relation() == ("add_remove", 3)


def test_fractional_epochs_rule_out_shuffled_only(qtbot, make):
    dialog, engine = make({"epochs": 2.5})
    answers = compare(qtbot, dialog)
    assert answers["shuffled"].startswith("— Epochs must be a whole number") and "shuffled batches" in answers["shuffled"]
    assert answers["poisson"] == "≤ 0.47" and answers["fixed_size"] == "≤ 0.93"
    assert "shuffled" not in engine.by_scheme()  # nothing was sent for it
    dialog.set_scheme("shuffled")
    assert dialog.row() is None
    assert "Epochs must be a whole number" in dialog.error_label.text()
    assert "Invalid" in dialog.fields["epochs"].toolTip()
    assert not dialog.buttons.button(QDialogButtonBox.StandardButton.Ok).isEnabled()


def test_an_edit_cancels_the_running_comparison_and_its_answer_never_shows(qtbot, make):
    engine = FakeEngine(hold=30000)
    dialog, _ = make({"dataset": 30000}, engine=engine)
    dialog.compare_now()  # Poisson and fixed size now wait until cancelled
    qtbot.waitUntil(lambda: sum(1 for r in engine.requests if r.rows[0].mechanism.kind
                                not in ("shuffled_gaussian", "random_allocation", "truncated_poisson")) == 2,
                    timeout=TIMEOUT)
    assert dialog.answers()["poisson"] == "computing…"
    dialog.fields["dataset"].setText("60000")
    assert engine.cancelled.wait(10)
    answers = compare(qtbot, dialog)
    assert answers["poisson"] == "≤ 0.47"  # for N = 60000: q = 0.001
    assert dialog.row().params["sampling_rate"] == 0.001


def test_an_engine_failure_shows_in_its_cell_only(qtbot, make):
    def engine(request, progress=None, cancel=None):
        if FakeEngine.scheme_of(request) == "shuffled":
            raise ModuleNotFoundError("No module named 'prvgui.accounting.pairs.shuffle'",
                                      name="prvgui.accounting.pairs.shuffle")
        return FakeEngine()(request)
    dialog, _ = make(engine=engine)
    answers = compare(qtbot, dialog)
    assert answers["shuffled"] == "not available in this version of prvgui"
    assert "shuffle" in dialog.table.item(2, 1).toolTip()
    assert answers["poisson"] == "≤ 0.47"
    dialog.set_scheme("shuffled")
    assert dialog.row() is not None  # the row itself is fine; only its comparison is missing


def test_a_costly_scheme_is_priced_and_waits_for_a_click(qtbot, make):
    from prvgui.accounting.core.cost import Cost
    from prvgui.engine.view_model import cost as real_cost
    priced = []

    def estimate(request):
        priced.append(FakeEngine.scheme_of(request))
        if FakeEngine.scheme_of(request) == "shuffled":
            return Cost(150.0, 3e9, 10**9, "accuracy 0.05 needs a grid of 1.0 billion points")
        return real_cost(request)  # the real estimate of the other schemes: cheap
    dialog, engine = make(cost=estimate)
    answers = compare(qtbot, dialog)
    assert sorted(priced) == sorted(SCHEMES)
    assert answers["poisson"] == "≤ 0.47" and answers["fixed_size"] == "≤ 0.93"
    cell = dialog.table.item(SCHEMES.index("shuffled"), 1)
    assert cell.text() == "not computed: would take about 2 min and 3.0 GB (click to compute)"
    assert "1.0 billion points" in cell.toolTip()
    assert "shuffled" not in engine.by_scheme() and dialog.held() == ("shuffled",)
    with qtbot.waitSignal(dialog.comparison_finished, timeout=TIMEOUT):
        dialog.table.cellClicked.emit(SCHEMES.index("shuffled"), 1)
    assert dialog.answers()["shuffled"] == "between 6.04 and 9.5" and dialog.held() == ()
    assert "shuffled" in engine.by_scheme()


def test_closing_stops_the_workers(qtbot, make):
    engine = FakeEngine(hold=60000)
    dialog, _ = make(engine=engine)
    dialog.compare_now()
    qtbot.waitUntil(lambda: len(engine.requests) >= 2, timeout=TIMEOUT)
    dialog.reject()
    assert engine.cancelled.is_set()
    assert not any(r.is_thread_running() for r in dialog.runners.values())


# ------------------------------------------------------------------ applying in the window
def test_applying_fixed_size_sets_replace_one_and_the_group_in_one_undo_step(qtbot, window, load):
    rows = [RowSpec("gaussian", {"sigma": 4.0, "sensitivity": 1.0}, 10, "queries")]
    load(window, rows=rows)
    window.composition.select_row(0)  # not a DP-SGD row: the helper adds one
    dialog = DpSgdDialog(window, {**CHUA, "scheme": "fixed_size"}, "a new row", window.doc, FakeEngine())
    qtbot.addWidget(dialog)
    dialog.user.setChecked(True)
    dialog.group.setText("4")
    window.apply_dpsgd(dialog.row(), dialog.values(), dialog.relation())
    assert (window.doc.neighbouring, window.doc.group_size) == ("replace_one", 4)
    assert len(window.doc) == 2 and window.doc.row(1).params["sampling"] == "fixed_size"
    assert window.targets.neighbouring.currentData() == "replace_one" and window.targets.group.text() == "4"
    assert window.stack.count() == 1
    window.stack.undo()
    assert (window.doc.neighbouring, window.doc.group_size, len(window.doc)) == ("add_remove", 1, 1)
    window.stack.redo()
    assert (window.doc.neighbouring, window.doc.group_size, len(window.doc)) == ("replace_one", 4, 2)


def test_applying_shuffled_to_a_subsampled_row_replaces_it_keeping_its_label_and_norm(qtbot, window, load):
    row = RowSpec("subsampled_gaussian", {"sigma": 1.0, "sampling_rate": 0.01, "sensitivity": 0.5}, 100,
                  "mine")
    load(window, rows=[row])
    window.composition.select_row(0)
    new = dpsgd_row("shuffled", CHUA)
    window.apply_dpsgd(new, CHUA, ("add_remove", 1))
    got = window.doc.row(0)
    assert got.kind == "shuffled_gaussian" and got.count == 1 and got.label == "mine"
    assert got.params == {"sigma": 0.8, "batches_per_epoch": 1000, "sensitivity": 0.5}
    assert window.stack.count() == 1 and len(window.doc) == 1
    # opened again on that row, the helper starts from it: shuffled, T = 1000, one epoch
    initial = initial_for_row(got, {"dataset": 60000, "batch": 60})
    assert initial["scheme"] == "shuffled" and initial["sensitivity"] == 0.5
    assert shuffled_schedule(initial["dataset"], initial["batch"], initial["epochs"]) == (1000, 1)


def test_the_helper_opened_on_a_fixed_size_row_starts_from_it(qtbot, window, load, monkeypatch):
    row = RowSpec("subsampled_gaussian", {"sigma": 1.2, "sampling_rate": 0.002, "sensitivity": 1.0,
                                          "sampling": "fixed_size"}, 500, "fixed")
    with qtbot.waitSignal(window.recomputer.finished, timeout=60_000):
        window.doc.reset([row], "replace_one", Targets(1e-5, 1.0, 0.05), 1)
    window.composition.select_row(0)
    # a dataset size remembered from an earlier use gives q = 0.002 exactly (120 of 60000)
    monkeypatch.setattr(window, "_dpsgd_settings", lambda: {"dataset": 60000.0, "batch": None, "epochs": None})
    seen = []

    def exec_(self):
        seen.append((self.scheme(), self.values(), self.user.isChecked(), self.group.text(),
                     self.row(), self.relation()))
        return True
    monkeypatch.setattr(DpSgdDialog, "exec", exec_)
    window.open_dpsgd_helper()
    scheme, values, user, k, new, relation = seen[-1]
    assert scheme == "fixed_size" and not user and relation == ("replace_one", 1)
    assert values["sigma"] == 1.2 and new.count == 500 and new.params["sampling_rate"] == 0.002
    assert window.doc.row(0) == row and window.stack.count() == 0  # applying what it showed changes nothing
    assert not any(d.is_comparing() for d in window.findChildren(DpSgdDialog))


@pytest.mark.parametrize("t, count, remembered", [(1000, 1, {}), (7, 3, {"dataset": 100, "batch": 15}),
                                                  (235, 60, {"dataset": 60000}), (1, 2, {"batch": 64})])
def test_settings_for_shuffled_reproduce_the_row(t, count, remembered):
    got = settings_for_shuffled(t, count, remembered)
    assert got is not None and shuffled_schedule(got["dataset"], got["batch"], got["epochs"]) == (t, count)


@pytest.mark.parametrize("n, b, e, field", [(100, 10, 1.5, "epochs"), (100, 0, 1, "batch"),
                                            (10**12, 1, 1, "batch"), (100, 10, 0, "epochs")])
def test_shuffled_schedule_names_the_bad_field(n, b, e, field):
    with pytest.raises(ValueError, match={"epochs": "Epochs must be", "batch": "Batch size B must be"}[field]) as err:
        shuffled_schedule(n, b, e)
    assert err.value.field == field
