"""Module hygiene: no import circles and no private names imported from another module.

Every ``import`` counts, at module level or inside a function (a lazy import only hides a circle until the first
call), except those under ``if TYPE_CHECKING:``, which never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = {"matcher": "dtypefix.matcher", "cli": "dtypefix.cli", "kbtools": "dtypefix.kbtools"}


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = path.relative_to(ROOT / folder).with_suffix("").parts
            name = ".".join((package, *parts)).removesuffix(".__init__")
            found[name] = path
    return found


MODULES = _modules()


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    out: list[ast.Import | ast.ImportFrom] = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            out += [n for child in node.orelse for n in _imports(ast.Module([child], []))]
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            out.append(node)
        out += _imports(node)
    return out


def _target(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    is_package = MODULES[module].name == "__init__.py"
    base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
    return ".".join([*base, *([node.module] if node.module else [])])


def _edges() -> tuple[dict[str, set[str]], list[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    private: list[str] = []
    for module, path in MODULES.items():
        for node in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                graph[module] |= {a.name for a in node.names if a.name in MODULES}
                continue
            target = _target(module, node)
            for alias in node.names:
                child = f"{target}.{alias.name}"
                if child in MODULES:
                    graph[module].add(child)
                elif target in MODULES:
                    graph[module].add(target)
                    if alias.name.startswith("_") and not alias.name.startswith("__"):
                        private.append(f"{module} imports {alias.name} from {target}")
    return graph, private


def _cycle(graph: dict[str, set[str]]) -> list[str]:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str]:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return []


def test_no_import_circles() -> None:
    graph, _ = _edges()
    assert _cycle(graph) == [], " -> ".join(_cycle(graph))


def test_no_private_names_imported_from_another_module() -> None:
    _, private = _edges()
    assert private == []


def test_the_graph_is_read() -> None:
    graph, _ = _edges()
    assert "dtypefix.matcher.evidence" in graph["dtypefix.matcher.conditions.base"]
    assert "dtypefix.cli.commands" in graph["dtypefix.cli.app"]  # a function-level import counts
