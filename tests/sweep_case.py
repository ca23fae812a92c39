"""The composition and the --vary specs the sweep tests share (tests/engine/test_sweep.py,
tests/test_cli_sweep.py): a Gaussian row and a DP-SGD row, 12 points."""
import json

COMP = {"format": "prvgui.composition", "version": 2,
        "targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.01},
        "mechanisms": [{"kind": "gaussian", "sigma": 2.0, "count": 10, "label": "queries"},
                       {"kind": "subsampled_gaussian", "sigma": 1.0, "sampling_rate": 0.01, "count": 1000,
                        "label": "training"}]}
VARY = ["1.sigma=1:3:3", "training.count=100:1000:4:log"]  # 12 points


def write_comp(folder) -> str:
    p = folder / "comp.json"
    p.write_text(json.dumps(COMP))
    return str(p)
