"""The import contracts in pyproject.toml ([tool.importlinter]) hold: lint-imports succeeds."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_import_contracts_hold():
    exe = os.path.join(os.path.dirname(sys.executable), "lint-imports")
    r = subprocess.run([exe, "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr


# ------------------------------------------------------------ cycles and reach-ins
def _graph() -> dict[str, set[str]]:
    """prvgui's modules and what each imports of prvgui, TYPE_CHECKING and function-level
    imports included (read with ast, nothing imported)."""
    import ast
    mods: dict[str, tuple[str, str]] = {}
    for dirpath, _, files in os.walk(os.path.join(ROOT, "prvgui")):
        for f in files:
            if f.endswith(".py"):
                path = os.path.join(dirpath, f)
                parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
                name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
                mods[name] = (path, ".".join(parts[:-1]))
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, (path, pkg) in mods.items():
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                    base = ".".join(up + ([node.module] if node.module else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                # (a module importing its own package's __init__ is not a cycle between modules)
                if t and t != m and not m.startswith(t + "."):
                    graph[m].add(t)
    return graph


def test_no_import_cycles_anywhere():
    graph = _graph()
    seen: dict[str, int] = {}  # 1: on the current path, 2: done

    def visit(m: str, path: list[str]) -> None:
        seen[m] = 1
        for t in sorted(graph[m]):
            if seen.get(t) == 1:
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(t):] + [t]))
            if t not in seen:
                visit(t, path + [t])
        seen[m] = 2
    for m in sorted(graph):
        if m not in seen:
            visit(m, [m])


def test_only_the_app_module_imports_the_main_window():
    """GUI controllers get the narrow objects they drive, never the window (issue 26)."""
    graph = _graph()
    importers = sorted(m for m, deps in graph.items() if "prvgui.gui.main_window" in deps)
    assert importers == ["prvgui.gui.app"]
