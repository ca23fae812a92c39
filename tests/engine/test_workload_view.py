"""A workload's shares as the window and the command line show them (engine/workload_view.py)."""
import json

import pytest

from prvgui.accounting import Gaussian, Laplace, Row
from prvgui.accounting.core.values import Relation
from prvgui.accounting.kinds.approx_dp import ApproxDP
from prvgui.engine.workload_view import NOT_A_SUM, shares_view


def test_rows_carry_their_label_kind_share_value_and_currency():
    rows = [Row(Gaussian(1.0), 4), Row(Gaussian(4.0), 1)]
    v = shares_view(rows, ["big", ""], Relation(), 1e-5)
    assert v["currency"] == "rho" and v["additive"] and v["threshold"] == 0.8
    assert v["rows"][0] == {"row": 1, "label": "big", "kind": "gaussian", "share": pytest.approx(2 / (2 + 1 / 32)),
                            "value": 2.0, "currency": "ρ (zCDP)"}
    assert v["dominant"] == [1] and v["notes"][-1] == NOT_A_SUM
    assert "at least 80%" in v["notes"][1]
    json.dumps(v)  # the command line prints it as it is


def test_the_currency_is_named_rdp_with_its_order_or_not_additive():
    v = shares_view([Row(Gaussian(1.0), 4), Row(Laplace(2.0), 1)], ["", ""], Relation(), 1e-5)
    assert v["currency"] == "rdp" and v["rows"][0]["currency"] == f"RDP at order α = {v['order']:g}"
    w = shares_view([Row(Gaussian(1.0), 4), Row(ApproxDP(1.0, 1e-8), 1)], ["", ""], Relation(), 1e-5, 0.05)
    assert w["currency"] == "epsilon" and not w["additive"]
    assert w["rows"][1]["currency"] == "ε alone (not additive)" and w["notes"][0].startswith("Not additive")
