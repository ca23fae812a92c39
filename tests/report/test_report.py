"""Reports (prvgui/report): the content matches the computed Result and independent closed forms,
the HTML is self-contained with inline SVG plots, the same input gives the same report apart
from the date, a pinned result is shown beside the headline and on every plot, and
``prvgui report`` refuses bad input with status 2 and leaves nothing half-written."""
from __future__ import annotations

import dataclasses
import datetime as dt
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from scipy.stats import norm

from prvgui import __version__
from prvgui.engine.view_model import compute
from prvgui.cli import main
from prvgui.document.composition import Composition
from prvgui.report import html, svg
from prvgui.report.model import gather, request_for, risk_of
from prvgui.report.numbers import fmt_bound

SIGMA, COUNT = 4.0, 20
WHEN = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.timezone.utc)


def _gaussian(sigma: float, label: str = "queries") -> Composition:
    return Composition.from_dict({
        "targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.05},
        "mechanisms": [{"kind": "gaussian", "sigma": sigma, "sensitivity": 1.0, "count": COUNT, "label": label}]})


@pytest.fixture(scope="module")
def gaussian():
    comp = _gaussian(SIGMA)
    res = compute(request_for(comp))
    return comp, res, gather(comp, res, created=WHEN)


@pytest.fixture(scope="module")
def pinned(gaussian):
    comp, res, _ = gaussian
    other = compute(request_for(_gaussian(3.0)))
    return other, gather(comp, res, pinned=("A", other), created=WHEN)


def _headline_number(page: str) -> float:
    m = re.search(r'class="headline">(?:\w+: )?ε ≤ ([0-9.e+-]+)', page)
    assert m, "no headline"
    return float(m.group(1))


def _intervals(page: str) -> list[tuple[float, float]]:
    return [(float(a), float(b)) for a, b in re.findall(r"\[([0-9.e+-]+), ([0-9.e+-]+)\]", page)]


def test_the_headline_is_the_certified_bound_rounded_up(gaussian):
    _, res, rep = gaussian
    page = html.render(rep)
    shown = _headline_number(page)
    assert shown >= res.certified_upper.value
    assert shown <= res.certified_upper.value * (1 + 1e-3)
    e = res.epsilon
    assert (f"lower {fmt_bound(e.lower, up=False)} · estimate" in page
            and f"upper {fmt_bound(e.upper)}" in page)
    mu = math.sqrt(COUNT) / SIGMA  # k Gaussians are one Gaussian with mu = sqrt(k)/sigma
    exact = [x for x in np.linspace(0.0, 5.0, 50001)
             if norm.cdf(-x / mu + mu / 2) - math.exp(x) * norm.cdf(-x / mu - mu / 2) <= 1e-5][0]
    assert float(fmt_bound(e.lower, up=False)) <= exact + 1e-4 and exact <= shown


def test_every_section_is_there_with_the_results_numbers(gaussian):
    _, res, rep = gaussian
    page = html.render(rep)
    for heading in ("Composition", "Certified result", "Accountants compared", "Plots",
                    "What it means for an attacker", "What it costs in accuracy",
                    "Error budget of the certificate", "Method"):
        assert f"<h2>{heading}</h2>" in page
    # composition: label, kind by title, parameters with units, count
    assert "<td>queries</td>" in page and "<td>Gaussian</td>" in page
    assert "Noise σ = 4 (std. dev., same units as Δ); Sensitivity Δ = 1 (L2 norm)" in page
    assert f'<td class="num" align="right">{COUNT}</td>' in page
    # targets and relation
    assert "target δ" in page and "1e-05" in page and "Guarantee for:</b> add/remove one record" in page
    # each accountant with its kind as the window says it
    for a in rep.accountants:
        assert f"<td>{a.label}</td>" in page.replace("&amp;", "&")
    assert "certified bounds" in page and "approximation, may under-report" in page and "upper bound" in page
    # delta at epsilon
    assert f"δ ≤ {fmt_bound(res.certified_upper_delta.value)}" in page
    # the error budget's total additive error, and the method's sources, version and date
    assert "total additive error on δ" in page
    assert f"{res.budget[0]['total_abs']:.3g}" in page
    assert "Gopi, Y. T. Lee, L. Wutschitz" in page and "Kulynych" in page
    assert f"prvgui {__version__}" in page and "2026-01-02 03:04 UTC" in page


def test_risk_read_out_holds_the_gaussian_closed_form(gaussian):
    """mu-GDP: TPR at FPR a is Phi(Phi^-1(a) + mu); the advantage is 2 Phi(mu/2) - 1."""
    _, res, rep = gaussian
    mu = math.sqrt(COUNT) / SIGMA
    rows = {w: v for w, v, _ in rep.risk}
    for a, words in ((0.001, "0.1%"), (0.01, "1%"), (0.1, "10%")):
        lo, up = _intervals(rows[f"true-positive rate at false-positive rate {words}"])[0]
        exact = norm.cdf(norm.ppf(a) + mu)
        assert lo <= exact <= up, (a, lo, exact, up)
    lo, up = _intervals(rows["advantage (TPR − FPR of the best attack, = δ(0))"])[0]
    assert lo <= 2 * norm.cdf(mu / 2) - 1 <= up
    page = html.render(rep)
    assert all(v in page for v in rows.values())


def test_utility_read_out_is_the_noise_95_interval(gaussian):
    _, _, rep = gaussian
    (row, text), = rep.utility
    value = float(re.search(r"± ([0-9.e+-]+)", text).group(1))
    exact = norm.ppf(0.975) * SIGMA
    assert row == "queries" and exact <= value <= exact * 1.001 and "query units" in text


def test_four_inline_svg_plots_and_no_outside_links(gaussian):
    _, _, rep = gaussian
    page = html.render(rep)
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    assert len(svgs) == 4
    for s in svgs:
        root = ET.fromstring(s)  # well-formed XML
        assert root.tag.endswith("svg") and root.findall(".//{http://www.w3.org/2000/svg}polyline")
    titles = [ET.fromstring(s).find("{http://www.w3.org/2000/svg}title").text for s in svgs]
    assert titles == ["Privacy profile δ(ε)", "Tradeoff function β(α)", "ε at δ = 1e-05 versus steps",
                      "Privacy loss distribution"]
    assert len(re.findall(r">1e-\d+</text>", svgs[0])) >= 3  # log δ axis: decade ticks
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//|file:)""", page, re.I)
    assert "<script" not in page and "<link" not in page and "@import" not in page
    ids = re.findall(r'id="([^"]+)"', page)
    assert len(ids) == len(set(ids))  # clip paths do not clash


def test_same_input_same_report_apart_from_the_date(gaussian):
    comp, res, _ = gaussian
    a = html.render(gather(comp, res))
    b = html.render(gather(comp, res, created=WHEN))
    assert a != b
    mask = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC")
    assert mask.sub("DATE", a) == mask.sub("DATE", b)
    again = compute(request_for(comp))  # recomputed from scratch
    assert html.render(gather(comp, again, created=WHEN)) == html.render(gather(comp, res, created=WHEN))


def test_a_pinned_result_is_beside_the_headline_and_on_every_plot(gaussian, pinned):
    _, res, _ = gaussian
    other, rep = pinned
    page = html.render(rep)
    assert "Pinned result A" in page
    assert f"A: ε ≤ {fmt_bound(other.certified_upper.value)}" in page
    assert other.certified_upper.value > res.certified_upper.value  # less noise (sigma 3), larger epsilon
    for s in re.findall(r"<svg.*?</svg>", page, re.S):
        assert re.search(r">A: (PRV upper|PRV lower|density)<", s)
    theirs = risk_of(other)
    rows = list(rep.risk)
    assert rows[0][2] == f"[{fmt_bound(theirs.tpr[0].lower, up=False)}, {fmt_bound(theirs.tpr[0].upper)}]"
    assert "pinned A" in page


def test_shuffled_rows_report_the_proven_lower_bound():
    comp = Composition.from_dict({"targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.05}, "mechanisms": [
        {"kind": "shuffled_gaussian", "sigma": 1.0, "batches_per_epoch": 10, "count": 2}]})
    res = compute(request_for(comp))
    page = html.render(gather(comp, res, created=WHEN))
    assert res.epsilon_at_least is not None
    assert f"lies between {fmt_bound(res.epsilon_at_least, up=False)} (proven lower bound" in page
    assert "Chua" in page and page.count("No tight accountant for shuffled batches exists") == 1  # said once


def test_fixed_size_rows_report_the_bracket_and_the_cost_against_poisson():
    comp = Composition.from_dict({"neighbouring": "replace_one",
                                  "targets": {"delta": 1e-5, "eps_error": 0.05}, "mechanisms": [
                                      {"kind": "subsampled_gaussian", "sigma": 1.1, "sampling_rate": 0.01,
                                       "sampling": "fixed_size", "count": 1000}]})
    res = compute(request_for(comp))
    page = html.render(gather(comp, res, created=WHEN))
    assert res.epsilon_at_least is not None and res.poisson_epsilon is not None
    assert res.poisson_epsilon.upper < 0.5 * res.epsilon_at_least  # Poisson at the same rate: far less
    assert f"lies between {fmt_bound(res.epsilon_at_least, up=False)}" in page
    assert "fixed-size batches cost much more than Poisson sampling at the same rate" in page
    assert page.count("the pair for sampling without replacement") == 1


def test_svg_lines_break_at_points_that_cannot_be_drawn():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([1e-1, 1e-2, np.nan, 1e-4, 0.0, 1e-6])  # nan and 0 (on a log axis) are gaps
    fig = svg.Figure("t", "x", "y", (svg.Series("s", x, y, "#000"),), log_y=True)
    root = ET.fromstring(svg.render(fig, "u"))
    lines = root.findall(".//{http://www.w3.org/2000/svg}polyline")
    assert [len(p.get("points").split()) for p in lines] == [2, 1, 1]
    # the axis spans the data: the first point on the left edge, the smallest y at the bottom
    first = lines[0].get("points").split()[0].split(",")
    assert float(first[0]) == pytest.approx(svg.LEFT)
    last = lines[2].get("points").split(",")
    assert float(last[1]) == pytest.approx(svg.H - svg.BOTTOM)


def _write(tmp_path, comp: Composition) -> str:
    path = tmp_path / "comp.json"
    path.write_text(__import__("json").dumps(comp.to_dict()))
    return str(path)


def test_cli_writes_an_html_report(tmp_path):
    f = _write(tmp_path, _gaussian(SIGMA))
    out = tmp_path / "report.html"
    assert main(["report", f, "--out", str(out), "--eps-error", "0.05"]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.count("<svg") == 4
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".prvgui-")] == []


@pytest.mark.parametrize("argv, words", [
    (["--out", "{d}/report.txt"], "--out must end in .html, .pdf, .md or .json; you typed"),
    (["--out", "{d}/no/such/folder/report.html"], "does not exist"),
    (["--out", "{d}"], "--out must end in .html, .pdf, .md or .json"),
    (["--out", "{d}/r.html", "--delta", "nan"], "--delta"),
    (["--out", "{d}/r.html", "--eps-error", "-1"], "--eps-error"),
])
def test_cli_bad_input_exits_2_and_writes_nothing(tmp_path, capsys, argv, words):
    f = _write(tmp_path, _gaussian(SIGMA))
    before = sorted(os.listdir(tmp_path))
    assert main(["report", f] + [a.format(d=tmp_path) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("prvgui: error: ") and words in err and err.count("\n") == 1
    assert sorted(os.listdir(tmp_path)) == before


def test_cli_unreadable_composition_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"format": "prvgui.composition", "version": 2, "mechanisms": [{"kind": "gaussian", '
                   '"sigma": -1, "count": 1}]}')
    assert main(["report", str(bad), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert "sigma" in err.lower() or "σ" in err
    assert main(["report", str(tmp_path / "missing.json"), "--out", str(tmp_path / "r.html")]) == 2
    assert not (tmp_path / "r.html").exists()


def test_cli_html_report_does_not_import_qt(tmp_path):
    f = _write(tmp_path, _gaussian(SIGMA))
    code = (f"import sys; from prvgui.cli import main; "
            f"rc = main(['report', {f!r}, '--out', {str(tmp_path / 'r.html')!r}]); "
            "print(rc, any(m.startswith(('PySide6', 'shiboken6', 'pyqtgraph')) for m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                       env={k: v for k, v in os.environ.items() if k != "QT_QPA_PLATFORM"})
    assert r.stdout.split() == ["0", "False"], r.stderr


def test_a_result_without_labels_or_curves_still_reports(gaussian):
    _, res, _ = gaussian
    bare = dataclasses.replace(res, profile=None, tradeoff=None, steps=None, pld=None, pld_atoms=None)
    page = html.render(gather(None, bare, created=WHEN))
    assert page.count("<svg") == 0 and "<td>Gaussian</td>" in page


@pytest.mark.parametrize("mechanisms, words", [
    ([], "The composition is empty: nothing to bound."),
    ([{"kind": "gaussian", "sigma": 0.0, "count": 3}], "No finite values to draw"),  # not private: ε = ∞
])
def test_edge_compositions_still_give_a_report(tmp_path, mechanisms, words):
    comp = Composition.from_dict({"targets": {"delta": 1e-5, "epsilon": 1.0, "eps_error": 0.05},
                                  "mechanisms": mechanisms})
    out = tmp_path / "r.html"
    assert main(["report", _write(tmp_path, comp), "--out", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert words in page
    for s in re.findall(r"<svg.*?</svg>", page, re.S):
        ET.fromstring(s)
    if mechanisms:
        assert "ε ≤ ∞" in page  # an unbounded epsilon is said, never hidden


def test_list_parameters_short_in_full_long_as_their_length():
    """A pair of distributions: short lists printed in full, a long one as its length (a
    100,000-outcome pair must not fill the report)."""
    from prvgui.document.model import RowSpec
    from prvgui.report.model import row_lines
    short = Composition(rows=[RowSpec("pmf_pair", {"p": (0.5, 0.5), "q": (0.25, 0.75)}, 3)])
    n = 1000
    long = Composition(rows=[RowSpec("pmf_pair", {"p": (1 / n,) * n, "q": (1 / n,) * n}, 3)])
    text = " ".join(row_lines(short, None)[0].parameters)
    assert "0.5, 0.5" in text and "0.25, 0.75" in text
    text = " ".join(row_lines(long, None)[0].parameters)
    assert "1000 outcomes" in text and len(text) < 200
