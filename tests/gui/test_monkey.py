"""A monkey in the window: random hostile typing in every field of every kind, the relation, the
group size and the targets, rows added, duplicated, deleted and undone, while the engine answers.
Nothing may raise (pytest-qt fails a test on an exception in a slot), the window keeps a result or
a message for every state, and undoing everything gives the document back."""
import random

import pytest
from PySide6.QtWidgets import QComboBox, QLineEdit

from prvgui.accounting.mechanisms import MECHANISM_KINDS

JUNK = ["", "-1", "0", "1e-320", "1e308", "nan", "inf", "abc", "1,5", "0x10", "１２", "1e", "--2", " 3 ", "1e-9",
        "2", "0.5", "100000000000000000000", "5e-324", "0.999999999999", "7", "1;2;3", "(0.5, 1e-3)", "٣"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(int(__import__("os").environ.get("PRVGUI_MONKEYS", "2"))))
def test_a_monkey_never_breaks_the_window(window, qtbot, seed):
    rng = random.Random(seed)
    w = window
    stack = w.stack
    start = (w.doc.rows, w.doc.neighbouring, w.doc.targets)
    kinds = list(MECHANISM_KINDS)
    for _ in range(100):
        action = rng.random()
        if action < 0.15:
            w.composition.add(rng.choice(kinds))
        elif action < 0.2 and len(w.doc) > 1:
            w.composition.delete()
        elif action < 0.25:
            w.composition.duplicate()
        elif action < 0.35:
            (stack.undo if rng.random() < 0.7 else stack.redo)()
        elif action < 0.45:
            box = rng.choice([b for b in w.findChildren(QComboBox) if b.isVisible() and b.count() > 1] or [None])
            if box is not None:
                box.activated.emit(rng.randrange(box.count()))
        else:
            edits = [e for e in w.findChildren(QLineEdit) if e.isVisible() and e.isEnabled()
                     and not e.isReadOnly() and (e.objectName().startswith(("param_", "target_", "count")))]
            if edits:
                e, text = rng.choice(edits), rng.choice(JUNK)
                e.setText("")
                if text.isascii():
                    qtbot.keyClicks(e, text)
                else:  # (QTest types ASCII only: as an input method would, then the edit's signal)
                    e.insert(text)
                    e.textEdited.emit(e.text())
                e.editingFinished.emit()
        qtbot.wait(rng.choice([0, 5, 50]))
    assert w.isVisible() and w.status.text()  # (a result, a message, or the work under way)
    while stack.canUndo():
        stack.undo()
    assert (w.doc.rows, w.doc.neighbouring, w.doc.targets) == start
    # (closing the window, in the fixture, must then stop whatever still runs)
