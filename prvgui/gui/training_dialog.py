"""From a training configuration: the framework's settings as the practitioner typed them, the
rows that account them, every conversion, and the pitfalls (document/training.py does the
translation; this dialog only collects the fields and shows its answer as they are typed).

Opened from the DP-SGD helper (*From a framework's settings…*) and from Compute ▸ From a training
configuration…. *Add rows* appends the rows and sets the neighbouring relation and δ, one undo
step; a field the translator rejects is named under the form and *Add rows* stays disabled.
"""
from __future__ import annotations

import html

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLabel,
                               QLineEdit, QVBoxLayout, QWidget)

from ..document.training import (CLAIMS, FRAMEWORKS, NEIGHBOURING, REDUCTIONS, SAMPLERS, ConfigError,
                                 Translation, translate)
from .widgets import WARN_COLOR

#: (key, label, tooltip) of the number fields; empty means "not given"
NUMBER_FIELDS = (
    ("dataset_size", "Dataset size N", "records the sampler draws from"),
    ("batch_size", "Physical batch", "records per forward pass"),
    ("accumulation_steps", "Accumulation steps", "physical batches per noisy update (default 1)"),
    ("epochs", "Epochs", "passes over the data (or give steps)"),
    ("steps", "Steps", "noisy updates (or give epochs)"),
    ("noise_multiplier", "Noise multiplier σ", "as configured: noise std / clipping norm"),
    ("microbatches", "Microbatches", "microbatches per batch (tensorflow_privacy; empty: none)"),
    ("adaptive_clip_sigma", "Adaptive clipping σ_b", "noise of the clipped count (empty: fixed clipping)"),
    ("delta", "δ", "target delta (empty: min(1e-5, 1/(10 N)))"),
    ("sampler_length", "Sampler length", "the length the data loader reported, if not N"),
)
CHOICE_FIELDS = (("framework", "Framework", FRAMEWORKS), ("sampler", "Batches as run", SAMPLERS),
                 ("loss_reduction", "Loss reduction", REDUCTIONS), ("neighbouring", "Neighbouring", NEIGHBOURING),
                 ("claim", "Claim stated for", CLAIMS))


def _value(text: str) -> object:
    """A field's text as the translator's JSON value: int, float, or the text (which it names)."""
    t = text.strip()
    for cast in (int, float):
        try:
            return cast(t)
        except ValueError:
            pass
    return t


class TrainingDialog(QDialog):
    """``config()`` is the configuration typed; ``translation`` the last good answer (or None)."""

    def __init__(self, parent: QWidget | None = None, initial: dict | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("From a training configuration")
        self.translation: Translation | None = None
        self.edits: dict[str, QLineEdit] = {}
        self.combos: dict[str, QComboBox] = {}
        form = QFormLayout()
        for key, label, options in CHOICE_FIELDS:
            box = QComboBox()
            box.setObjectName(key)
            if key in ("sampler", "loss_reduction", "claim"):
                box.addItem("(default)", None)
            for o in options:
                box.addItem(o.replace("_", " "), o)
            box.currentIndexChanged.connect(self.update_answer)
            self.combos[key] = box
            form.addRow(label, box)
        for key, label, tip in NUMBER_FIELDS:
            edit = QLineEdit()
            edit.setObjectName(key)
            edit.setToolTip(tip)
            edit.setPlaceholderText(tip)
            edit.textChanged.connect(self.update_answer)
            self.edits[key] = edit
            form.addRow(label, edit)
        self.checkpoints = QCheckBox("Intermediate checkpoints are released")
        self.checkpoints.toggled.connect(self.update_answer)
        form.addRow("", self.checkpoints)
        self.answer = QLabel()
        self.answer.setObjectName("training_answer")
        self.answer.setWordWrap(True)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.add = self.buttons.addButton("Add rows", QDialogButtonBox.ButtonRole.AcceptRole)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addWidget(self.answer)
        layout.addWidget(self.buttons)
        self.set_config(initial or {"framework": "opacus", "dataset_size": 60000, "batch_size": 256,
                                    "epochs": 10, "noise_multiplier": 1.0})

    def set_config(self, cfg: dict) -> None:
        for key, box in self.combos.items():
            i = box.findData(cfg.get(key))
            box.setCurrentIndex(max(i, 0))
        for key, edit in self.edits.items():
            edit.setText("" if cfg.get(key) is None else str(cfg[key]))
        self.checkpoints.setChecked(bool(cfg.get("checkpoints_released", False)))
        self.update_answer()

    def config(self) -> dict:
        cfg: dict = {}
        for key, box in self.combos.items():
            if box.currentData() is not None:
                cfg[key] = box.currentData()
        for key, edit in self.edits.items():
            if edit.text().strip():
                cfg[key] = _value(edit.text())
        if self.checkpoints.isChecked():
            cfg["checkpoints_released"] = True
        return cfg

    def update_answer(self) -> None:
        try:
            t = translate(self.config())
        except ConfigError as exc:
            self.translation = None
            self.add.setEnabled(False)
            self.answer.setText(f'<span style="color:{WARN_COLOR}">{html.escape(str(exc))}</span>')
            return
        self.translation = t
        self.add.setEnabled(t.composition is not None)
        parts = ["<b>Conversions</b><ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in t.conversions)
                 + "</ul>"]
        if t.composition is not None:
            rows = "".join(f"<li>{html.escape(r.kind)} × {r.count:,}: "
                           + html.escape(", ".join(f"{k} = {v:.6g}" if isinstance(v, float) else f"{k} = {v}"
                                                   for k, v in r.params.items())) + "</li>"
                           for r in t.composition.rows)
            parts.append(f"<b>Rows</b> ({html.escape(t.composition.neighbouring.replace('_', '/'))}, "
                         f"δ = {t.composition.targets.delta:g})<ul>{rows}</ul>")
        if t.pitfalls:
            parts.append("<b>Pitfalls</b><ul>" + "".join(
                f'<li><span style="color:{WARN_COLOR}">{html.escape(p.code)}</span>: {html.escape(p.message)}</li>'
                for p in t.pitfalls) + "</ul>")
        self.answer.setText("".join(parts))
