"""No import cycles inside `app.llm`, read from the source: every `import` and `from`
counts, including those inside functions and under `TYPE_CHECKING`, and so do the
modules a lazy name map (`_LAZY`, `WIRE_MODULES`) or `importlib.import_module` names."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "app.llm"


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path in sorted((ROOT / "app" / "llm").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


def _absolute(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if _is_package(path) else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _named_modules(tree: ast.Module, known: set[str]) -> Iterator[str]:
    """Modules named by string: values of a module-level dict of module paths, and the
    argument of `importlib.import_module("...")`."""
    for node in tree.body:
        value = node.value if isinstance(node, ast.Assign | ast.AnnAssign) else None
        if isinstance(value, ast.Dict):
            for item in value.values:
                if isinstance(item, ast.Constant) and item.value in known:
                    yield item.value
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and node.args[0].value in known
        ):
            yield node.args[0].value


def _lazy_names(tree: ast.Module, known: set[str]) -> dict[str, str]:
    """A package's `_LAZY = {"Name": "module"}` map."""
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == "_LAZY" for t in targets):
                value = node.value
                if isinstance(value, ast.Dict):
                    return {
                        k.value: v.value
                        for k, v in zip(value.keys, value.values, strict=True)
                        if isinstance(k, ast.Constant)
                        and isinstance(v, ast.Constant)
                        and v.value in known
                    }
    return {}


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    known = set(modules)
    trees = {name: ast.parse(path.read_text(encoding="utf-8")) for name, path in modules.items()}
    lazy = {name: _lazy_names(tree, known) for name, tree in trees.items()}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, tree in trees.items():
        edges = graph[name]
        edges.update(_named_modules(tree, known))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                edges.update(alias.name for alias in node.names if alias.name in known)
            elif isinstance(node, ast.ImportFrom):
                source = _absolute(name, modules[name], node)
                for alias in node.names:
                    submodule = f"{source}.{alias.name}"
                    if submodule in known:
                        edges.add(submodule)
                    elif source in known:
                        edges.add(source)
                        if alias.name in lazy.get(source, {}):
                            edges.add(lazy[source][alias.name])
        edges.discard(name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_graph_sees_imports_inside_functions_and_lazy_maps() -> None:
    graph = import_graph()
    assert "app.llm.client" in graph[PACKAGE]  # through `_LAZY`
    assert "app.llm.wire.local" in graph["app.llm.client"]  # imported inside a function
    assert "app.llm.wire.anthropic" in graph["app.llm.http_client"]  # named in WIRE_MODULES


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_of_app_llm_imports_one_that_imports_it_back() -> None:
    assert cycles(import_graph()) == []
