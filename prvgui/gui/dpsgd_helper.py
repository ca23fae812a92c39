"""DP-SGD helper: a training run's row from dataset size, batch size, epochs and noise, asking how
batches are formed and who is protected, with the consequence shown side by side.

How batches are formed decides the row:

* Poisson: each record joins each step independently with probability q = B / N (B is the
  expected batch size); ``epochs`` passes take ⌈epochs / q⌉ steps. A subsampled Gaussian row.
* Fixed size: each step a uniformly random batch of exactly B records; same q and steps. A
  subsampled Gaussian row with ``sampling = fixed_size``, which is defined under replace-one
  neighbouring only: applying it sets the document's neighbouring to replace-one.
* Shuffled: each epoch a fresh random permutation split into T = ⌈N / B⌉ batches. A shuffled
  Gaussian row with ``batches_per_epoch = T`` and ``count = epochs`` (whole epochs).

Who is protected sets the document's group size (records per person). Before the row is
added the dialog shows, for each scheme, the certified ε at the document's δ of this training
run alone (Shuffled: the proven lower bound and the certified upper bound), each computed by
the engine's ``compute`` on its own worker thread (``tasks.TaskRunner``); an edit cancels the
running jobs and, after a short pause, starts new ones. Applying is one undo step
(``apply_helper``).

The step-count rounding tolerates floating-point noise so that 1 epoch at q = 0.1 gives 10
steps, not 11.
"""
from __future__ import annotations

import html
import math
from collections.abc import Callable
from fractions import Fraction

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QColor, QShowEvent, QUndoStack
from PySide6.QtWidgets import (QAbstractItemView, QButtonGroup, QDialog, QDialogButtonBox, QFormLayout,
                               QGroupBox, QHBoxLayout, QHeaderView, QLabel, QLineEdit, QRadioButton,
                               QTableWidget, QTableWidgetItem, QVBoxLayout, QWidget)

from ..accounting.kinds.base import MAX_GROUP, Relation
from ..accounting.kinds.shuffled_gaussian import MAX_BATCHES
from ..accounting.mechanisms import DPSGD_KIND, MAX_COUNT, kind_class
from ..accounting.validate import check_number
from ..accounting.view_model import Request, compute
from ..document.model import Document, RowSpec, Targets
from .fmt import fmt, fmt_bound, fmt_count, fmt_value, parse_number
from .targets import NEIGHBOURING, check_group_text
from .tasks import TaskRunner, failure_text
from .undo import Editor
from .widgets import WARN_COLOR, ErrorLabel, mark

MAX_DATASET = 10**12
SHUFFLED_KIND = "shuffled_gaussian"
#: the kinds the helper fills in (opened on such a row it starts from it and replaces it)
HELPER_KINDS = (DPSGD_KIND, SHUFFLED_KIND)
SCHEMES = ("poisson", "fixed_size", "shuffled")
SCHEME_TITLES = {"poisson": "Poisson", "fixed_size": "Fixed size", "shuffled": "Shuffled"}
SCHEME_TEXT = {
    "poisson": "Poisson: each record joins each step with probability B / N",
    "fixed_size": "Fixed size: each step a random batch of exactly B records",
    "shuffled": "Shuffled: each epoch a fresh permutation, split into batches of B",
}
SCHEME_TIPS = {
    "poisson": "Opacus' default and what DP-SGD accounting usually assumes. The row: a subsampled "
               "Gaussian with q = B / N, ⌈epochs / q⌉ steps.",
    "fixed_size": "Sampling without replacement at each step (e.g. a random sampler with a fixed batch "
                  "size). The row: a subsampled Gaussian with fixed-size batches, q = B / N, "
                  "⌈epochs / q⌉ steps. Defined under replace-one neighbouring only.",
    "shuffled": "What most training loops do (shuffle, then iterate over the batches). The row: a "
                "shuffled Gaussian with ⌈N / B⌉ batches per epoch and the epochs as its count. No tight "
                "accountant exists: prvgui reports a proven lower bound and a certified upper bound.",
}
#: after an edit, the comparison starts once typing has paused this long
DEBOUNCE_MS = 400
GREY_TEXT = "#666"
FIELD_NAMES = (("dataset", "dataset size"), ("batch", "batch size"), ("epochs", "epochs"),
               ("sigma", "sigma"))


def _whole(name: str, value: object, lo: int, hi: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or value != int(value) or not lo <= value <= hi:
        raise ValueError(f"{name} must be a whole number in [{lo}, {hi}], got {value!r}")
    return int(value)


def dpsgd_schedule(dataset_size: object, batch_size: object, epochs: object) -> tuple[float, int]:
    """(sampling rate q, number of steps) for DP-SGD with Poisson or fixed-size batches.

    Raises ValueError naming the bad field.
    """
    n = _whole("dataset size", dataset_size, 1, MAX_DATASET)
    b = _whole("batch size", batch_size, 1, n)
    epochs = check_number("epochs", epochs, 0.0, lo_open=True)
    q = b / n
    exact = epochs / q
    steps = max(1, math.ceil(exact - 1e-9 * max(1.0, exact)))
    if steps > MAX_COUNT:
        raise ValueError(f"epochs × dataset size / batch size gives {steps} steps (limit {MAX_COUNT})")
    return q, steps


def shuffled_schedule(dataset_size: object, batch_size: object, epochs: object) -> tuple[int, int]:
    """(batches per epoch T = ⌈N / B⌉, epochs) for DP-SGD with shuffled batches; the epochs are
    the row's count, so they must be whole. Raises ValueError naming the bad field."""
    n = _whole("dataset size", dataset_size, 1, MAX_DATASET)
    b = _whole("batch size", batch_size, 1, n)
    check_number("epochs", epochs, 0.0, lo_open=True)
    if epochs != int(epochs):  # type: ignore[arg-type]
        raise ValueError(f"epochs must be a whole number for shuffled batches (the row counts epochs), "
                         f"got {epochs!r}")
    e = _whole("epochs", epochs, 1, MAX_COUNT)
    t = -(-n // b)
    if t > MAX_BATCHES:
        raise ValueError(f"dataset size / batch size gives {t} batches per epoch (limit {MAX_BATCHES})")
    return t, e


def dpsgd_row(scheme: str, values: dict, sensitivity: object = 1.0) -> RowSpec:
    """The row for one way of forming batches; raises ValueError naming the bad field."""
    n, b, epochs, sigma = (values.get(k) for k in ("dataset", "batch", "epochs", "sigma"))
    what = "" if scheme == "poisson" else f", {SCHEME_TITLES[scheme].lower()}"
    label = f"DP-SGD{what}: N={fmt_value(n)}, batch {fmt_value(b)}, {fmt(epochs, 6)} epochs"
    if scheme == "shuffled":
        t, e = shuffled_schedule(n, b, epochs)
        row = RowSpec(SHUFFLED_KIND, {"sigma": sigma, "batches_per_epoch": t, "sensitivity": sensitivity},
                      e, label)
    elif scheme in ("poisson", "fixed_size"):
        q, steps = dpsgd_schedule(n, b, epochs)
        params = {"sigma": sigma, "sampling_rate": q, "sensitivity": sensitivity}
        if scheme == "fixed_size":
            params["sampling"] = "fixed_size"
        row = RowSpec(DPSGD_KIND, params, steps, label)
    else:
        raise ValueError(f"batches must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    err = row.error()
    if err:
        raise ValueError(err)
    return row


def scheme_relation(scheme: str, neighbouring: str, group_size: int) -> Relation:
    """The relation a row of ``scheme`` is accounted under once applied: fixed-size batches
    need replace-one; the others keep the document's neighbouring."""
    return Relation("replace_one" if scheme == "fixed_size" else neighbouring, group_size)


def scheme_request(row: RowSpec, relation: Relation, targets: Targets) -> Request:
    """The engine request for the ε of one training row alone (no curves)."""
    return Request((row.to_row(),), targets.delta, None, targets.eps_error, relation.neighbouring.value,
                   relation.group_size, profile_points=0, tradeoff_points=0, steps_row=None,
                   want_pld=False)


def _gives(values: dict, q: float, count: int) -> bool:
    try:
        return dpsgd_schedule(values.get("dataset"), values.get("batch"), values.get("epochs")) == (q, count)
    except (ValueError, TypeError):
        return False


def settings_for_row(q: object, count: object, remembered: dict) -> dict | None:
    """Dataset size, batch size and epochs that give exactly the row's sampling rate ``q`` and
    ``count``: the remembered ones if they do, else the remembered dataset size with the batch size
    that gives q, else q as a fraction B / N; each with the roundest epochs that give ``count``.
    None if no such values exist (e.g. q or count is invalid)."""
    if isinstance(q, bool) or not isinstance(q, (int, float)) or not 0 < q <= 1 \
            or isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return None
    q = float(q)
    if _gives(remembered, q, count):
        return {k: remembered[k] for k in ("dataset", "batch", "epochs")}
    pairs = []
    n = remembered.get("dataset")
    if isinstance(n, (int, float)) and math.isfinite(n) and 1 <= n <= MAX_DATASET and n == int(n):
        pairs.append((int(n), round(n * q)))
    frac = Fraction(q).limit_denominator(MAX_DATASET)
    pairs.append((frac.denominator, frac.numerator))
    for n, b in pairs:
        if b < 1 or b > n or b / n != q:
            continue
        exact = count * b / n
        for digits in range(16):  # the roundest epochs that still give count steps
            values = {"dataset": n, "batch": b, "epochs": round(exact, digits)}
            if _gives(values, q, count):
                return values
    return None


def settings_for_shuffled(batches: object, count: object, remembered: dict) -> dict | None:
    """Dataset size, batch size and epochs that give a shuffled row's batches per epoch and
    count (= epochs): the remembered ones if they do, else the remembered dataset size with
    the batch size that gives T batches, else T batches of the remembered (or 256) records."""
    if isinstance(batches, bool) or not isinstance(batches, int) or not 1 <= batches <= MAX_BATCHES \
            or isinstance(count, bool) or not isinstance(count, int) or count < 1:
        return None

    def gives(n, b) -> bool:
        try:
            return shuffled_schedule(n, b, count) == (batches, count)
        except (ValueError, TypeError):
            return False

    n, b = remembered.get("dataset"), remembered.get("batch")
    if gives(n, b):
        return {"dataset": n, "batch": b, "epochs": count}
    if isinstance(n, (int, float)) and math.isfinite(n) and 1 <= n <= MAX_DATASET and n == int(n):
        b2 = -(-int(n) // batches)
        if gives(int(n), b2):
            return {"dataset": int(n), "batch": b2, "epochs": count}
    b = b if isinstance(b, (int, float)) and math.isfinite(b) and 1 <= b == int(b) else 256
    if gives(int(b) * batches, int(b)):
        return {"dataset": int(b) * batches, "batch": int(b), "epochs": count}
    return None


def initial_for_row(row: RowSpec | None, remembered: dict, group_size: int = 1) -> dict:
    """The helper's starting values: the remembered ones, overridden by what the row says (its
    scheme, N / B / epochs that give its schedule, its σ and sensitivity)."""
    initial = {k: v for k, v in remembered.items() if v is not None}
    if group_size > 1:
        initial["group_size"] = group_size
    if row is None or row.kind not in HELPER_KINDS:
        return initial
    p = row.params
    if row.kind == SHUFFLED_KIND:
        initial["scheme"] = "shuffled"
        initial.update(settings_for_shuffled(p.get("batches_per_epoch"), row.count, initial) or {})
    else:
        initial["scheme"] = "fixed_size" if p.get("sampling") == "fixed_size" else "poisson"
        initial.update(settings_for_row(p.get("sampling_rate"), row.count, initial) or {})
    if isinstance(p.get("sigma"), (int, float)):
        initial["sigma"] = p["sigma"]
    if isinstance(p.get("sensitivity"), (int, float)):
        initial["sensitivity"] = p["sensitivity"]
    return initial


def merged_row(old: RowSpec, new: RowSpec) -> RowSpec:
    """The helper's row put into an existing helper row: the row's clipping norm (sensitivity)
    and its own label stay; a label the helper wrote is replaced."""
    label = new.label if not old.label or old.label.startswith("DP-SGD") else old.label
    params = dict(new.params)
    if "sensitivity" in old.params:
        params["sensitivity"] = old.params["sensitivity"]
    if old.kind == new.kind and "sampling" in old.params and "sampling" not in params:
        params["sampling"] = "poisson"  # the row said so explicitly: keep saying it
    return RowSpec(new.kind, params, new.count, label)


def apply_helper(doc: Document, stack: QUndoStack, at: int | None, new: RowSpec,
                 relation: tuple[str, int] | None, insert: Callable[[RowSpec], None]) -> bool:
    """Put the helper's row into row ``at`` (a helper row; None: a new row through ``insert``)
    and set the document's relation: one undo step. False if nothing changed."""
    editor = Editor(doc, stack)
    rel_changes = relation is not None and tuple(relation) != (doc.neighbouring, doc.group_size)
    old = doc.row(at) if at is not None else None
    row = merged_row(old, new) if old is not None else new
    row_changes = old is None or row != old
    if not rel_changes and not row_changes:
        return False
    macro = rel_changes and row_changes
    if macro:
        stack.beginMacro("DP-SGD helper")
    try:
        if rel_changes:
            editor.set_relation(*relation)  # type: ignore[misc]
        if row_changes:
            if at is not None:
                editor.replace(at, row, "DP-SGD helper on row")
            else:
                insert(row)
    finally:
        if macro:
            stack.endMacro()
    return True


def outcome_text(scheme: str, result) -> str:
    """A scheme's cell: the certified upper bound on ε (Shuffled: between the proven lower bound
    and it)."""
    best = getattr(result, "certified_upper", None)
    upper = best.value if best is not None else result.epsilon.upper
    at_least = getattr(result, "epsilon_at_least", None)
    if at_least is not None:
        return f"between {fmt_bound(at_least, up=False)} and {fmt_bound(upper)}"
    return f"≤ {fmt_bound(upper)}"


def unavailable_text(exc: object) -> tuple[str, str]:
    """(cell text, tooltip) for a scheme the engine could not compute."""
    if isinstance(exc, ImportError):  # an engine module this build lacks (e.g. mixture, shuffle)
        return "not available in this version of prvgui", f"The engine could not load a module: {exc}"
    text = failure_text(exc)
    return f"could not compute: {text}", text


class DpSgdDialog(QDialog):
    """Asks for N, B, epochs, noise, how batches are formed and who is protected; shows the
    certified ε of each scheme side by side. ``row()`` is the resulting RowSpec, ``relation()``
    the (neighbouring, group size) the document gets."""

    #: a scheme's cell changed (its answer, a failure or a reason it cannot be computed)
    comparison_updated = Signal(str)
    #: every scheme has answered for the current inputs
    comparison_finished = Signal()

    FIELDS = (("dataset", "Dataset size N", "records", "Number of records in the training set"),
              ("batch", "Batch size B", "records per step",
               "Records per step: exactly B with fixed-size batches and (except maybe the last) with "
               "shuffled batches, B on average with Poisson sampling"),
              ("epochs", "Epochs", "passes over the data",
               "Number of passes over the training set (whole epochs with shuffled batches)"),
              ("sigma", "Noise multiplier σ", "× clipping norm",
               "Standard deviation of the Gaussian noise divided by the clipping norm"))

    def __init__(self, parent: QWidget | None = None, initial: dict | None = None,
                 target: str = "a new row", doc: Document | None = None,
                 compute_fn: Callable | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("DP-SGD helper")
        self.setMinimumWidth(640)
        self._doc = doc if doc is not None else Document()
        #: the engine's compute (tests inject a fake)
        self._compute = compute_fn or compute
        init = {"dataset": 60000, "batch": 256, "epochs": 60, "sigma": 1.1, **(initial or {})}
        self._sensitivity = init.get("sensitivity", 1.0)
        self._closed = False
        lay = QVBoxLayout(self)
        intro = QLabel("Describe the training run: the helper fills in the row and shows what each way "
                       "of forming batches certifies, before anything changes.")
        intro.setWordWrap(True)
        lay.addWidget(intro)
        form = QFormLayout()
        lay.addLayout(form)
        self.fields: dict[str, QLineEdit] = {}
        self._tips: dict[str, str] = {}
        for key, title, unit, tip in self.FIELDS:
            edit = QLineEdit(fmt_value(init[key]))
            edit.setObjectName(f"dpsgd_{key}")
            edit.setToolTip(tip)
            edit.textChanged.connect(self._update)
            self.fields[key] = edit
            self._tips[key] = tip
            row = QHBoxLayout()
            row.addWidget(edit, 1)
            unit_label = QLabel(unit)
            unit_label.setStyleSheet("color: #555;")
            row.addWidget(unit_label, 1)
            form.addRow(title, row)

        batches = QGroupBox("How are batches formed?")
        blay = QVBoxLayout(batches)
        self.scheme_group = QButtonGroup(self)
        self.scheme_buttons: dict[str, QRadioButton] = {}
        for i, scheme in enumerate(SCHEMES):
            b = QRadioButton(SCHEME_TEXT[scheme])
            b.setObjectName(f"dpsgd_scheme_{scheme}")
            b.setToolTip(SCHEME_TIPS[scheme])
            self.scheme_group.addButton(b, i)
            self.scheme_buttons[scheme] = b
            blay.addWidget(b)
        self.scheme_buttons.get(init.get("scheme", "poisson"), self.scheme_buttons["poisson"]).setChecked(True)
        self.scheme_group.idToggled.connect(lambda _id, on: on and self._update())
        lay.addWidget(batches)

        who = QGroupBox("Who is protected?")
        wlay = QHBoxLayout(who)
        self.one_record = QRadioButton("One record")
        self.one_record.setObjectName("dpsgd_one_record")
        self.one_record.setToolTip("The guarantee covers any single record (records per person = 1).")
        self.user = QRadioButton("A user with up to")
        self.user.setObjectName("dpsgd_user")
        self.user.setToolTip("User-level (group) privacy: the guarantee covers everyone who contributes up "
                             "to k records, all of them changed at once. Sets the Targets' records per "
                             "person.")
        self.group = QLineEdit(str(init.get("group_size", 10)))
        self.group.setObjectName("dpsgd_group_size")
        self.group.setMaximumWidth(80)
        self._group_tip = f"k: records one person may contribute, a whole number from 1 to {MAX_GROUP}"
        self.group.setToolTip(self._group_tip)
        who_group = QButtonGroup(self)
        who_group.addButton(self.one_record)
        who_group.addButton(self.user)
        (self.user if init.get("group_size", 1) > 1 else self.one_record).setChecked(True)
        self.user.toggled.connect(self._update)
        self.group.textChanged.connect(self._update)
        wlay.addWidget(self.one_record)
        wlay.addSpacing(16)
        wlay.addWidget(self.user)
        wlay.addWidget(self.group)
        wlay.addWidget(QLabel("records"))
        wlay.addStretch(1)
        lay.addWidget(who)

        self.relation_note = QLabel()
        self.relation_note.setObjectName("dpsgd_relation_note")
        self.relation_note.setWordWrap(True)
        lay.addWidget(self.relation_note)
        self.summary = QLabel()
        self.summary.setObjectName("dpsgd_summary")
        self.summary.setWordWrap(True)
        lay.addWidget(self.summary)

        self.compare_title = QLabel()
        self.compare_title.setWordWrap(True)
        lay.addWidget(self.compare_title)
        self.table = QTableWidget(len(SCHEMES), 3)
        self.table.setObjectName("dpsgd_comparison")
        self.table.setHorizontalHeaderLabels(["Batches", "ε at δ", "Guarantee for"])
        self.table.verticalHeader().hide()
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.NoSelection)
        self.table.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.table.setWordWrap(True)
        hh = self.table.horizontalHeader()
        hh.setSectionResizeMode(0, QHeaderView.ResizeMode.ResizeToContents)
        hh.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
        hh.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        for r, scheme in enumerate(SCHEMES):
            item = QTableWidgetItem(SCHEME_TITLES[scheme])
            item.setToolTip(SCHEME_TEXT[scheme])
            self.table.setItem(r, 0, item)
            self.table.setItem(r, 1, QTableWidgetItem("…"))
            self.table.setItem(r, 2, QTableWidgetItem(""))
        lay.addWidget(self.table)
        self.compare_note = QLabel("Shuffled batches have no tight accountant: the true ε lies between a "
                                   "proven lower bound (an attack, Chua et al. 2024) and the certified "
                                   "upper bound. Each number holds only for its own way of forming "
                                   "batches.")
        self.compare_note.setWordWrap(True)
        self.compare_note.setStyleSheet("color: #555;")
        lay.addWidget(self.compare_note)

        self.error_label = ErrorLabel()
        lay.addWidget(self.error_label)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText(f"Apply to {target}")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        lay.addWidget(self.buttons)

        # the comparison: one worker per scheme, so that each answer shows as soon as it is ready
        self.runners: dict[str, TaskRunner] = {}
        for scheme in SCHEMES:
            runner = TaskRunner(f"prvgui-dpsgd-{scheme}", self)
            runner.done.connect(lambda result, s=scheme: self._answered(s, outcome_text(s, result), None))
            runner.failed.connect(lambda exc, s=scheme: self._answered(s, *unavailable_text(exc), failed=True))
            self.runners[scheme] = runner
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.compare_now)
        self._rows: dict[str, RowSpec | None] = {}
        self._errors: dict[str, str | None] = {}
        self._pending: set[str] = set()
        self._answers: dict[str, str] = {}
        self._group_error: str | None = None
        self._update()

    # ------------------------------------------------------------ what the dialog gives
    def values(self) -> dict[str, object]:
        return {k: parse_number(e.text()) for k, e in self.fields.items()}

    def scheme(self) -> str:
        return SCHEMES[max(self.scheme_group.checkedId(), 0)]

    def set_scheme(self, scheme: str) -> None:
        self.scheme_buttons[scheme].setChecked(True)

    def group_size(self) -> int | None:
        """Records per person the dialog asks for (None while the typed k is invalid)."""
        if not self.user.isChecked():
            return 1
        value, _ = check_group_text(self.group.text())
        return value

    def relation(self) -> tuple[str, int] | None:
        """(neighbouring, group size) the document gets on Apply (None while invalid)."""
        k = self.group_size()
        if k is None:
            return None
        rel = scheme_relation(self.scheme(), self._doc.neighbouring, k)
        return rel.neighbouring.value, rel.group_size

    def row(self) -> RowSpec | None:
        """The row for the typed values and the chosen scheme (None while they are invalid)."""
        if self._group_error is not None:
            return None
        return self._rows.get(self.scheme())

    def answers(self) -> dict[str, str]:
        """Each scheme's cell text in the comparison (for the current inputs)."""
        return {s: self.table.item(r, 1).text() for r, s in enumerate(SCHEMES)}

    def is_comparing(self) -> bool:
        """True while a scheme's answer is awaited (never after ``shutdown``)."""
        return not self._closed and (bool(self._pending) or self._timer.isActive())

    # ------------------------------------------------------------ inputs
    def _update(self) -> None:
        v = self.values()
        self._rows, self._errors = {}, {}
        for scheme in SCHEMES:
            try:
                self._rows[scheme] = dpsgd_row(scheme, v, self._sensitivity)
                self._errors[scheme] = None
            except ValueError as exc:
                self._rows[scheme] = None
                self._errors[scheme] = str(exc)
        self.group.setEnabled(self.user.isChecked())
        _, self._group_error = check_group_text(self.group.text()) if self.user.isChecked() else (None, None)
        mark(self.group, self._group_error, self._group_tip)
        chosen = self.scheme()
        err = self._group_error or self._errors[chosen]
        field = _field_of(self._errors[chosen]) if self._errors[chosen] and not self._group_error else None
        for key, edit in self.fields.items():
            mark(edit, err if key == field else None, self._tips[key])
        self.error_label.show_error(err)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setEnabled(err is None)
        self._show_summary(chosen, v)
        self._show_relation(chosen)
        self._mark_chosen(chosen)
        self._start_comparison()

    def _show_summary(self, scheme: str, v: dict) -> None:
        row = self._rows.get(scheme)
        if row is None:
            self.summary.setText("The row: …")
        elif scheme == "shuffled":
            self.summary.setText(f"The row: Shuffled Gaussian, T = ⌈N / B⌉ = "
                                 f"{fmt_count(row.params['batches_per_epoch'])} batches per epoch, "
                                 f"count = {fmt_count(row.count)} epoch{'' if row.count == 1 else 's'}")
        else:
            self.summary.setText(f"The row: Subsampled Gaussian ({'fixed-size' if scheme == 'fixed_size' else 'Poisson'} "
                                 f"batches), q = B / N = {fmt(row.params['sampling_rate'], 6)}, "
                                 f"count = ⌈epochs / q⌉ = {fmt_count(row.count)} steps")

    def _show_relation(self, scheme: str) -> None:
        k = self.group_size()
        now = NEIGHBOURING.get(self._doc.neighbouring, self._doc.neighbouring).lower()
        if scheme == "fixed_size" and self._doc.neighbouring != "replace_one":
            text = ("<b>Fixed-size batches are defined only under replace-one neighbouring</b> (a record "
                    "is swapped for another, the dataset size stays the same): applying sets the "
                    "composition's neighbouring from “" + html.escape(now) + "” to “replace one record”, "
                    "for every row.")
            style = f"color: {WARN_COLOR};"
        else:
            text = f"Neighbouring: {html.escape(now)} (as in the Targets)."
            style = "color: #555;"
        if k is not None and k != self._doc.group_size:
            text += f" Applying sets the records per person from {self._doc.group_size} to {k}."
        self.relation_note.setText(text)
        self.relation_note.setStyleSheet(style)

    def _mark_chosen(self, chosen: str) -> None:
        for r, scheme in enumerate(SCHEMES):
            for c in range(3):
                item = self.table.item(r, c)
                font = item.font()
                font.setBold(scheme == chosen)
                item.setFont(font)
            self.table.item(r, 0).setText(SCHEME_TITLES[scheme] + ("  ◀ chosen" if scheme == chosen else ""))

    # ------------------------------------------------------------ the comparison
    def _start_comparison(self) -> None:
        """The inputs changed: drop the running jobs and start new ones after a pause."""
        if self._closed:
            return
        for runner in self.runners.values():
            runner.discard()
        self._pending = set()
        self._answers = {}
        t = self._doc.targets
        k = self.group_size()
        self.compare_title.setText(f"ε at δ = {fmt(t.delta)} of this training run alone (other rows not "
                                   f"included), certified by prvgui:")
        self.table.setHorizontalHeaderLabels(["Batches", f"ε at δ = {fmt(t.delta)}", "Guarantee for"])
        for r, scheme in enumerate(SCHEMES):
            rel = None if k is None else scheme_relation(scheme, self._doc.neighbouring, k)
            self.table.item(r, 2).setText(rel.describe() if rel is not None else "")
            reason = self._group_error or self._errors[scheme]
            cell = self.table.item(r, 1)
            cell.setText(f"— {_short(reason)}" if reason else "computing…")
            cell.setToolTip(reason or "")
            cell.setForeground(QColor(GREY_TEXT if reason else "#000"))
            if reason is None:
                self._pending.add(scheme)
        self._fit_table()
        if self._pending:
            self._timer.start()
        else:
            self._timer.stop()
            self.comparison_finished.emit()

    def _fit_table(self) -> None:
        """Rows as tall as their text; the table as tall as its rows (no scroll bar for three)."""
        self.table.resizeRowsToContents()
        height = self.table.horizontalHeader().height() + 2 * self.table.frameWidth()
        height += sum(self.table.rowHeight(r) for r in range(self.table.rowCount()))
        self.table.setFixedHeight(height)
        self._fit_height()

    def _fit_height(self) -> None:
        """Grow to the height the wrapped texts need (Qt does not for height-for-width layouts)."""
        want = self.layout().totalHeightForWidth(self.width()) if self.layout().hasHeightForWidth() \
            else self.sizeHint().height()
        if self.isVisible() and self.height() < want:
            self.resize(self.width(), want)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        self._fit_height()

    def compare_now(self) -> None:
        """Start the pending schemes' computations now (skipping the pause)."""
        self._timer.stop()
        if self._closed:
            return
        k = self.group_size()
        for scheme in SCHEMES:
            row = self._rows.get(scheme)
            if scheme not in self._pending or row is None or k is None:
                continue
            request = scheme_request(row, scheme_relation(scheme, self._doc.neighbouring, k), self._doc.targets)
            fn = self._compute
            self.runners[scheme].start(lambda progress, cancel, r=request: fn(r, progress=progress,
                                                                                cancel=cancel))

    def _answered(self, scheme: str, text: str, tip: str | None = None, failed: bool = False) -> None:
        if scheme not in self._pending:
            return
        self._pending.discard(scheme)
        r = SCHEMES.index(scheme)
        cell = self.table.item(r, 1)
        cell.setText(text)
        cell.setToolTip(tip or text)
        cell.setForeground(QColor(GREY_TEXT if failed else "#000"))
        self._answers[scheme] = text
        self._fit_table()
        self.comparison_updated.emit(scheme)
        if not self._pending:
            self.comparison_finished.emit()

    # ------------------------------------------------------------ closing
    def shutdown(self) -> None:
        """Stop the comparison's worker threads and wait for them (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._timer.stop()
        for runner in self.runners.values():
            runner.shutdown()

    def done(self, result: int) -> None:  # noqa: D401 - Qt override
        self.shutdown()
        super().done(result)

    def closeEvent(self, event: QCloseEvent) -> None:  # closing a dialog never shown skips done()
        self.shutdown()
        super().closeEvent(event)


def _short(message: str) -> str:
    """A reason cut to its first clause for a table cell (the tooltip has it all)."""
    for cut in (" (", ", got "):
        if cut in message:
            message = message[:message.index(cut)]
    return message


def _field_of(message: str) -> str:
    """The field a schedule message is about (default: epochs)."""
    if message.startswith("sigma"):
        return "sigma"
    return next((k for k, w in FIELD_NAMES if message.startswith(w)), "epochs")
