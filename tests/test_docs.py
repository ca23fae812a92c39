"""The documentation stays true to the code: the kinds table is the registry's, the README is an
entry of at most ~200 lines with the two commands first, and its links point at files."""
import re
from pathlib import Path

from prvgui.accounting.kinds import KINDS
from prvgui.accounting.kinds._table import BEGIN, END, table

ROOT = Path(__file__).resolve().parent.parent


def test_the_kinds_table_in_the_docs_is_the_registrys():
    text = (ROOT / "docs" / "kinds.md").read_text()
    committed = text[text.index(BEGIN):text.index(END) + len(END)]
    assert committed == table(), "docs/kinds.md is stale: python -m prvgui.accounting.kinds._table"
    assert all(f"`{k}`" in committed for k in KINDS)


def test_the_readme_is_an_entry_and_its_links_resolve():
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    assert "pip install . && prvgui" in blocks[0] and 'pip install ".[test]"' in blocks[1]
    for link in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if not link.startswith("http"):
            assert (ROOT / link).exists(), link
