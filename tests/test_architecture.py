"""The app's shape, checked from its source: no import cycles between modules of `app/`
(imports inside functions count; `if TYPE_CHECKING:` imports do not), no module much
over 500 lines, and the layers import only downwards."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[1] / "app"
MAX_LINES = 500
GENERATED: set[str] = set()  # modules written by a tool, if any ever are


def module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in APP.rglob("*.py")}
PACKAGES = {module_name(p) for p in APP.rglob("__init__.py")}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                found.append(child)
            visit(child)

    visit(tree)
    return found


def _lazy_map(tree: ast.Module) -> dict[str, str]:
    """A package's `_LAZY = {"Name": "app.pkg.module"}` (names imported on first use)."""
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id.startswith("_LAZY") for t in node.targets
        ):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, dict):
                return {str(k): str(v) for k, v in value.items()}
    return {}


TREES = {name: ast.parse(path.read_text(), str(path)) for name, path in MODULES.items()}
LAZY = {name: _lazy_map(tree) for name, tree in TREES.items() if name in PACKAGES}


def _reexports(package: str) -> dict[str, str]:
    """What a package's __init__ imports eagerly from its own modules."""
    out: dict[str, str] = {}
    for node in TREES[package].body:
        if (
            isinstance(node, ast.ImportFrom)
            and node.module
            and node.level == 0
            and node.module.startswith(package + ".")
        ):
            for alias in node.names:
                out[alias.asname or alias.name] = node.module
    return out


def _target(package: str, name: str) -> str:
    """The module `from package import name` really depends on."""
    if f"{package}.{name}" in MODULES:
        return f"{package}.{name}"
    if package in PACKAGES:
        lazy = LAZY.get(package, {})
        if name in lazy and lazy[name] in MODULES:
            return lazy[name]
        eager = _reexports(package).get(name)
        if eager in MODULES:
            return eager
    return package


def imports_of(name: str) -> set[str]:
    package = name if name in PACKAGES else name.rsplit(".", 1)[0]
    edges: set[str] = set()
    for node in _runtime_imports(TREES[name]):
        if isinstance(node, ast.Import):
            edges.update(a.name for a in node.names if a.name in MODULES)
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        if base not in MODULES:
            continue
        for alias in node.names:
            edges.add(_target(base, alias.name))
    edges.discard(name)
    return edges


def cycles() -> list[list[str]]:
    graph = {name: imports_of(name) for name in MODULES}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def test_no_import_cycles_between_modules_of_the_app() -> None:
    assert cycles() == []


def test_the_cycle_check_finds_a_cycle_through_a_function_level_import() -> None:
    # The check itself: an import inside a function that closes a loop is found.
    tree = ast.parse("def f():\n    from app.events import Status\n")
    assert [n.module for n in _runtime_imports(tree) if isinstance(n, ast.ImportFrom)] == [
        "app.events"
    ]
    guarded = ast.parse("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import app.x\n")
    assert all(
        not (isinstance(n, ast.Import) and n.names[0].name == "app.x")
        for n in _runtime_imports(guarded)
    )


def test_no_module_is_much_over_500_lines() -> None:
    long = {
        name: n
        for name, path in MODULES.items()
        if name not in GENERATED and (n := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert long == {}


def test_only_the_ui_imports_qt_and_no_lower_layer_imports_the_ui() -> None:
    offenders = []
    for name in MODULES:
        if name.startswith("app.ui"):
            continue
        for node in _runtime_imports(TREES[name]):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [
                node.module or ""
            ]
            if any(n.startswith(("PySide6", "app.ui")) for n in names):
                offenders.append(name)
    # The command line opens the window (and renders the avatar's snapshot through its
    # widget) and the self-test checks that Qt loads: they may.
    allowed = {"app.commands.window", "app.commands.avatar", "app.checks.selftest"}
    assert sorted(set(offenders) - allowed) == []


def test_the_agent_never_imports_a_wire_module() -> None:
    for name in MODULES:
        if name.startswith("app.agent"):
            assert not any(e.startswith("app.llm.wire") for e in imports_of(name)), name


# -- the session's and the agent core's insides stay inside ------------------------------
ROOT = APP.parent
# The module that owns each object's private members (its class is defined there).
OWNERS = {"session": "app/session/conductor.py", "core": "app/agent/core.py"}
SOURCES = sorted(
    p for folder in ("app", "bench", "tests") for p in (ROOT / folder).rglob("*.py")
)


def _owner_name(node: ast.expr) -> str | None:
    """`session` for `x.session` / `session`, `core` for `agent.core` (the name an object
    is reached by, when it names a session or the agent's core)."""
    name = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else None
    )
    if name is None:
        return None
    for owner in OWNERS:
        if name == owner or name.endswith("_" + owner):
            return owner
    return None


def private_uses(tree: ast.AST) -> list[tuple[int, str]]:
    """`(line, "session._tasks")` for each private member of a session or a core used."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute):
            continue
        attr = node.attr
        if not attr.startswith("_") or (attr.startswith("__") and attr.endswith("__")):
            continue
        owner = _owner_name(node.value)
        if owner is not None:
            found.append((node.lineno, f"{owner}.{attr}"))
    return found


def test_no_private_member_of_a_session_or_the_core_is_used_outside_its_module() -> None:
    offenders = []
    for path in SOURCES:
        relative = path.relative_to(ROOT).as_posix()
        if path.name == "test_architecture.py":
            continue
        tree = ast.parse(path.read_text(), filename=relative)
        for line, use in private_uses(tree):
            if OWNERS[use.split(".")[0]] != relative:
                offenders.append(f"{relative}:{line} {use}")
    assert offenders == []


def test_the_private_member_check_finds_them() -> None:
    tree = ast.parse(
        "session._tasks\nself.session._spawn()\nagent.core._request()\nour_session._x = 1\n"
        "session.__class__\nsession.busy\ncore.build_request()\n"
    )
    assert sorted(use for _, use in private_uses(tree)) == [
        "core._request", "session._spawn", "session._tasks", "session._x"
    ]


def test_nothing_shares_a_floor_object() -> None:
    # Who is speaking is told by signals (app.session.speaking); no shared, many-writer
    # state object is back under another name.
    assert "app.session.floor" not in MODULES
    for name in MODULES:
        assert "Floor(" not in MODULES[name].read_text() or name == "app.session.strategies"
