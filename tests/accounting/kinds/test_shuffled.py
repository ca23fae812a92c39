"""Shuffled batches: the certified upper bound (one Gaussian per epoch), the proven lower bound
(Chua et al. 2024's attack, shuffle.py) and the Poisson number shown for contrast."""
import json
import math
import subprocess
import sys

import pytest

import references as ref
from prvgui.accounting import Accountant, Row, SubsampledGaussian
from prvgui.accounting.queries import bracket
from prvgui.accounting.kinds.shuffled_gaussian import ShuffledGaussian
from prvgui.accounting.queries.risk import risk


@pytest.mark.parametrize("sigma,T,epochs", [(0.8, 1000, 1), (2.0, 50, 4)])
def test_the_upper_bound_is_one_gaussian_per_epoch(sigma, T, epochs):
    b = Accountant([Row(ShuffledGaussian(sigma, T), epochs)]).epsilon(1e-6)
    assert b.lower <= ref.gaussian_epsilon(math.sqrt(epochs) / sigma, 1e-6) <= b.upper
    b = Accountant([Row(ShuffledGaussian(sigma, T), epochs)], neighbouring="replace_one", group_size=2).epsilon(1e-6)
    assert b.lower <= ref.gaussian_epsilon(4 * math.sqrt(epochs) / sigma, 1e-6) <= b.upper


def test_the_issue_example_poisson_says_047_the_attack_proves_604():
    rows = [Row(ShuffledGaussian(0.8, 1000), 1)]
    upper = Accountant(rows).epsilon(1e-6).upper
    at_least = bracket.epsilon_at_least(rows, 1e-6)
    poisson = bracket.poisson_contrast(rows, 1e-6)
    assert 6.03 <= at_least <= 6.045 < upper  # Chua et al. 2024: epsilon >= 6.04
    assert poisson.lower <= 0.47 <= poisson.upper + 0.01  # the issue's Poisson number
    # the contrast is Poisson accounting of the same training: q = 1/T, T steps per epoch
    same = Accountant([Row(SubsampledGaussian(0.8, 1e-3), 1000)]).epsilon(1e-6)
    assert poisson == same


def test_lower_bounds_grow_with_epochs_and_with_the_relation():
    one = bracket.epsilon_at_least([Row(ShuffledGaussian(1.0, 100), 1)], 1e-5)
    three = bracket.epsilon_at_least([Row(ShuffledGaussian(1.0, 100), 3)], 1e-5)
    replace = bracket.epsilon_at_least([Row(ShuffledGaussian(1.0, 100), 1)], 1e-5, "replace_one")
    assert one < three < Accountant([Row(ShuffledGaussian(1.0, 100), 3)]).epsilon(1e-5).upper
    assert one < replace
    # a tight row adds its own worst case to the lower bound's composition
    mixed = bracket.epsilon_at_least([Row(ShuffledGaussian(1.0, 100), 1), Row(SubsampledGaussian(1.0, 0.01), 100)],
                                     1e-5)
    assert mixed > one


def test_risk_with_shuffled_rows_keeps_lower_below_upper():
    r = risk([Row(ShuffledGaussian(0.8, 1000), 1)], (0.001, 0.01))
    for t in r.tpr:
        assert 0 <= t.lower <= t.upper <= 1
    assert r.advantage.lower < r.advantage.upper


def test_the_command_line_adds_epsilon_at_least(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"format": "prvgui.composition", "version": 2, "mechanisms": [
        {"kind": "shuffled_gaussian", "sigma": 0.8, "batches_per_epoch": 1000, "count": 1}]}))
    out = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert 6.03 <= got["epsilon_at_least"] <= got["certified_upper"]["value"]
    text = subprocess.run([sys.executable, "-m", "prvgui", "epsilon", str(path), "--delta", "1e-6"],
                          capture_output=True, text=True, timeout=120).stdout
    assert "no tight accountant" in text.lower() and "Poisson accounting would say" in text
