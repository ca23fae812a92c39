"""Copy as Markdown / Copy as LaTeX (report/tables.py): valid table rows, the special
characters escaped, the numbers those of the Result (upper bounds rounded up), and the report's
number formatting (shared with the window)."""
from __future__ import annotations

import dataclasses
import re

import pytest
from hypothesis import given, strategies as st

from prvgui.engine.view_model import compute
from prvgui.document.composition import Composition
from prvgui.report.model import request_for
from prvgui.report.numbers import fmt_bound
from prvgui.report.tables import accountant_lines, latex_escape, latex_table, markdown_table


@pytest.fixture(scope="module")
def result():
    comp = Composition.from_dict({
        "neighbouring": "replace_one", "group_size": 2,
        "targets": {"delta": 1e-6, "epsilon": 2.0, "eps_error": 0.05},
        "mechanisms": [{"kind": "gaussian", "sigma": 5.0, "count": 10},
                       {"kind": "pure_dp", "epsilon": 0.1, "count": 3}]})
    return compute(request_for(comp))


@pytest.fixture(scope="module")
def nasty(result):
    """The same result with notes full of characters that Markdown and LaTeX treat specially."""
    comps = {k: dict(v, note="50% of a_b & c | d $x$ #1 {y} ~z ^w \\ end > 0") for k, v in result.comparisons.items()}
    return dataclasses.replace(result, comparisons=comps)


def _md_cells(line: str) -> list[str]:
    assert line.startswith("| ") and line.endswith(" |")
    return re.split(r"(?<!\\) \| ", line[2:-2])


def test_markdown_rows_are_valid_table_rows(nasty):
    text = markdown_table(nasty)
    blocks = [b.splitlines() for b in text.strip().split("\n\n")]
    assert len(blocks) == 2
    for block in blocks:
        width = len(_md_cells(block[0]))
        assert re.fullmatch(r"\|( -{3,}:? \|)+", block[1])
        assert len(_md_cells(block[1])) == width
        for line in block[2:]:
            assert len(_md_cells(line)) == width, line
    assert "a\\_b" not in text and "c \\| d" in text  # only the pipe needs escaping in a cell


def test_markdown_holds_the_headline_accountants_targets_and_relation(result):
    text = markdown_table(result)
    value = result.certified_upper.value
    assert f"ε ≤ {fmt_bound(value)} (certified, by PRV)" in text and float(fmt_bound(value)) >= value
    assert f"[{fmt_bound(result.epsilon.lower, up=False)}, {fmt_bound(result.epsilon.upper)}]" in text
    for a in accountant_lines(result):
        assert f"| {a.label} | {a.kind} | {a.eps} | {a.delta} |" in text
    assert "| Target δ | 1e-06 |" in text and "replace one record, groups of 2 records" in text
    assert "| PRV (this calculator) | certified bounds |" in text
    assert "| approximation, may under-report |" in text and "| exact |" in text


def test_latex_escapes_special_characters_and_balances(nasty):
    text = latex_table(nasty)
    assert text.count(r"\begin{tabular}") == text.count(r"\end{tabular}") == 2
    assert r"50\% of a\_b \& c \textbar{} d \$x\$ \#1 \{y\} \textasciitilde{}z \textasciicircum{}w \textbackslash{} end $>$ 0" in text
    body = text.split(r"\begin{tabular}{llrrl}")[1]
    rows = [ln for ln in body.splitlines() if ln.endswith(r"\\")]
    for line in rows:
        assert len(re.findall(r"(?<!\\)&", line)) == 4, line
    assert r"$\varepsilon$ $\leq$" in text and "$>$" in text  # symbols as math (OT1 has no > in text)
    for line in text.splitlines():  # no raw special character survives outside a command
        stripped = re.sub(r"\\[a-zA-Z]+\{\}|\\[%_&$#{}]|\$\\[a-zA-Z]+\$|\$_0\$", "", line)
        assert not re.search(r"(?<!\\)[%_#~^]", stripped), line


def test_latex_escape_of_every_special_character():
    assert latex_escape("a%b_c&d$e#f{g}h~i^j\\k") == (r"a\%b\_c\&d\$e\#f\{g\}h\textasciitilde{}i"
                                                      r"\textasciicircum{}j\textbackslash{}k")


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(min_value=2, max_value=8))
def test_printed_bounds_stay_bounds(x, digits):
    """Rounded outwards, except that a value within 1e-12 (relative) of a short decimal is that
    decimal: the binary noise of e.g. 1e-05 (the window's rule)."""
    assert float(fmt_bound(x, digits)) >= x * (1 - 1e-12)
    assert float(fmt_bound(x, digits, up=False)) <= x * (1 + 1e-12)


def test_no_delta_query_says_na(result):
    req = dataclasses.replace(result.request, epsilon=None)
    res = dataclasses.replace(result, request=req, delta=None, comparisons_delta={}, certified_upper_delta=None)
    text = markdown_table(res)
    assert "| δ at ε |" in text and "δ reported at ε" not in text
    assert all(_md_cells(line)[3] == "n/a" for line in text.split("\n\n")[1].splitlines()[2:])


def test_a_label_with_html_is_text_in_the_markdown_report():
    """Found by a hostile label: the Markdown report wrote a row label ``<script>...`` as it was
    (a renderer that passes HTML through would run it) and turned its pipes into slashes. Labels
    and notes are now escaped: HTML specials as entities, pipes and backslashes with a
    backslash."""
    from prvgui.report.markdown import render_markdown
    from prvgui.report.model import gather
    label = "<script>alert(1)</script> a|b & c\\d"
    comp = Composition.from_dict({"targets": {"eps_error": 0.05},
                                  "mechanisms": [{"kind": "gaussian", "sigma": 5.0, "count": 10, "label": label}]})
    text = render_markdown(gather(comp, compute(request_for(comp))))
    assert "<script>" not in text
    assert "| &lt;script&gt;alert(1)&lt;/script&gt; a\\|b &amp; c\\\\d |" in text
