"""From a training configuration (gui/training_dialog.py): fields in, the translator's answer out."""
import pytest

from prvgui.gui.training_dialog import TrainingDialog


@pytest.fixture
def dialog(qtbot):
    d = TrainingDialog(None, {"framework": "jax_privacy", "dataset_size": 1000, "batch_size": 10,
                              "accumulation_steps": 8, "steps": 100, "noise_multiplier": 1.0, "delta": 1e-5})
    qtbot.addWidget(d)
    return d


def test_the_accumulation_example_shows_q_and_the_row(dialog):
    text = dialog.answer.text()
    assert "10 × 8 = 80" in text and "sampling_rate = 0.08" in text
    assert dialog.add.isEnabled()
    (row,) = dialog.translation.composition.rows
    assert row.params["sampling_rate"] == pytest.approx(0.08) and row.count == 100


def test_a_pitfall_is_listed_and_rows_still_offered(dialog):
    dialog.combos["loss_reduction"].setCurrentIndex(dialog.combos["loss_reduction"].findData("mean"))
    assert "realised_batch_normalisation" in dialog.answer.text() and dialog.add.isEnabled()


@pytest.mark.parametrize("key, text, words", [("noise_multiplier", "abc", "noise_multiplier must be"),
                                              ("batch_size", "-3", "batch_size must be"),
                                              ("epochs", "2", "exactly one of epochs and steps")])
def test_bad_fields_are_named_and_block_adding(dialog, key, text, words):
    dialog.edits[key].setText(text)
    assert words in dialog.answer.text() and not dialog.add.isEnabled()
    assert dialog.translation is None


def test_a_weighted_sampler_offers_no_rows(dialog):
    dialog.combos["sampler"].setCurrentIndex(dialog.combos["sampler"].findData("weighted"))
    assert "weighted_sampler" in dialog.answer.text() and not dialog.add.isEnabled()


def test_add_rows_in_the_window_is_one_undo_step(qtbot, window):
    d = TrainingDialog(window, {"framework": "opacus", "dataset_size": 10000, "batch_size": 100,
                                "epochs": 2, "noise_multiplier": 1.0, "sampler": "fixed_size", "delta": 1e-6})
    qtbot.addWidget(d)
    before = len(window.doc.rows)
    window.apply_training(d.translation)
    assert len(window.doc.rows) == before + 1 and window.doc.neighbouring == "replace_one"
    assert window.doc.targets.delta == 1e-6
    assert window.doc.rows[-1].params["sampling"] == "fixed_size"
    window.stack.undo()
    assert len(window.doc.rows) == before and window.doc.neighbouring == "add_remove"
