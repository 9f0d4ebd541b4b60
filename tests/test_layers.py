"""The layers of the code, read from its imports (ast), as the house set them.

- no product module imports ``hardware_sim`` (only dealerbox/cli.py, dealerbox/tools/**
  and the ``commands`` modules may: they choose the simulated table);
- dealerbox/hw imports nothing from service, floor or tools;
- dealerbox/rules and dealerbox/domain import nothing from hw, service, floor or tools;
- dealerbox/floor imports nothing from service, hw, rules or tools;
- dealerbox/service reaches the floor only through dealerbox.link, never dealerbox.floor;
- hardware_sim imports only dealerbox.domain, errors, resources and hw;
- no import cycle between files;
- at most a few imports of project modules inside functions, outside dealerbox/cli.py
  and the ``commands`` modules (an import in a function is how a cycle hides).

Every import counts, at module level and in functions, except for the cycles those
under ``if TYPE_CHECKING:`` (never run). An import names the module it reaches:
``from dealerbox.domain import cards`` reaches dealerbox/domain/cards.py,
``from dealerbox.domain import Event`` reaches dealerbox/domain/__init__.py. Each
failure names the file, the line and the rule.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dealerbox", "hardware_sim")
#: Function-level imports of project modules allowed outside cli.py and the commands modules.
FUNCTION_IMPORTS_ALLOWED = 10


@dataclass(frozen=True)
class Import:
    """One project module an import statement reaches."""

    importer: str        # dotted name of the importing module
    path: str            # its file, relative to the checkout
    line: int
    target: str          # the dotted name as imported (module, or module.attribute)
    in_function: bool
    type_checking: bool

    def where(self) -> str:
        return f"{self.path}:{self.line}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def product_files() -> dict[str, Path]:
    """Every module of the product: dotted name -> file."""
    files = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            files[module_name(path)] = path
    return files


def _is_type_checking(test: ast.expr) -> bool:
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports_of(name: str, path: Path) -> list[Import]:
    """The imports of project modules in one file, with where they stand."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    relative = str(path.relative_to(ROOT))
    found: list[Import] = []

    def add(node: ast.stmt, target: str, in_function: bool, type_checking: bool) -> None:
        if target.split(".")[0] in PACKAGES:
            found.append(Import(name, relative, node.lineno, target, in_function, type_checking))

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_checking)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(node, alias.name, in_function, type_checking)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                add(node, module if alias.name == "*" else f"{module}.{alias.name}", in_function, type_checking)
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner, type_checking)

    visit(tree, False, False)
    return found


FILES = product_files()
IMPORTS = [imp for name, path in FILES.items() for imp in imports_of(name, path)]


def reached(target: str) -> str | None:
    """The module an imported name lives in: the longest known module it starts with."""
    while target and target not in FILES:
        target = target.rpartition(".")[0]
    return target or None


def within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def is_commands(name: str) -> bool:
    return name.rpartition(".")[2] == "commands"


def broken(rule: str, importer_in, forbidden) -> list[str]:
    """Each import statement whose importer *importer_in* accepts and one of whose targets
    *forbidden* refuses: where it is, what it imports, the rule."""
    statements: dict[str, list[str]] = {}
    for imp in IMPORTS:
        if importer_in(imp.importer) and forbidden(imp.target):
            statements.setdefault(imp.where(), []).append(imp.target)
    return [f"{where}: imports {', '.join(targets)}: {rule}" for where, targets in statements.items()]


def report(violations: list[str]) -> str:
    return f"{len(violations)} import(s) break the layers:\n" + "\n".join(violations)


def test_the_files_are_read():
    # The rules below would pass on nothing: make sure they see the code.
    assert {"dealerbox.cli", "dealerbox.domain", "dealerbox.hw", "hardware_sim"} <= set(FILES)
    assert any(imp.target.startswith("dealerbox.domain") for imp in IMPORTS)


def test_no_product_module_imports_the_simulator():
    violations = broken(
        "a product module must not import hardware_sim (only dealerbox/cli.py, dealerbox/tools/** "
        "and the commands modules may)",
        lambda m: within(m, "dealerbox") and not within(m, "dealerbox.cli", "dealerbox.tools")
        and not is_commands(m),
        lambda t: within(t, "hardware_sim"))
    assert not violations, report(violations)


def test_the_drivers_import_nothing_of_the_service_floor_or_tools():
    violations = broken(
        "dealerbox/hw must not import dealerbox.service, dealerbox.floor or dealerbox.tools",
        lambda m: within(m, "dealerbox.hw"),
        lambda t: within(t, "dealerbox.service", "dealerbox.floor", "dealerbox.tools"))
    assert not violations, report(violations)


def test_the_rules_and_the_vocabulary_import_no_outer_layer():
    violations = broken(
        "dealerbox/rules and dealerbox/domain must not import dealerbox.hw, dealerbox.service, "
        "dealerbox.floor or dealerbox.tools",
        lambda m: within(m, "dealerbox.rules", "dealerbox.domain"),
        lambda t: within(t, "dealerbox.hw", "dealerbox.service", "dealerbox.floor", "dealerbox.tools"))
    assert not violations, report(violations)


def test_the_floor_imports_nothing_of_the_table():
    violations = broken(
        "dealerbox/floor must not import dealerbox.service, dealerbox.hw, dealerbox.rules or dealerbox.tools",
        lambda m: within(m, "dealerbox.floor"),
        lambda t: within(t, "dealerbox.service", "dealerbox.hw", "dealerbox.rules", "dealerbox.tools"))
    assert not violations, report(violations)


def test_the_service_reaches_the_floor_only_through_the_link():
    violations = broken(
        "dealerbox/service reaches the floor only through dealerbox.link, never dealerbox.floor",
        lambda m: within(m, "dealerbox.service"),
        lambda t: within(t, "dealerbox.floor"))
    assert not violations, report(violations)


def test_the_simulator_imports_only_the_vocabulary_and_the_drivers():
    allowed = ("hardware_sim", "dealerbox.domain", "dealerbox.errors", "dealerbox.resources", "dealerbox.hw")
    violations = broken(
        "hardware_sim may import only dealerbox.domain, dealerbox.errors, dealerbox.resources and dealerbox.hw",
        lambda m: within(m, "hardware_sim"),
        lambda t: not within(t, *allowed))
    assert not violations, report(violations)


def import_graph() -> dict[str, dict[str, Import]]:
    """File -> the files it imports (module or function level, not TYPE_CHECKING), each
    with its first import statement."""
    graph: dict[str, dict[str, Import]] = {name: {} for name in FILES}
    for imp in IMPORTS:
        target = reached(imp.target)
        if imp.type_checking or target is None or target == imp.importer:
            continue
        graph[imp.importer].setdefault(target, imp)
    return graph


def strongly_connected(graph: dict[str, dict[str, Import]]) -> list[list[str]]:
    """Tarjan's strongly connected components of more than one module, iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    return components


def shortest_cycle(graph: dict[str, dict[str, Import]], members: list[str]) -> list[Import]:
    """A shortest cycle through the component's first member, as its import statements."""
    inside = set(members)
    start = members[0]
    came_from: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target, imp in sorted(graph[node].items()):
                if target not in inside or target in came_from:
                    continue
                came_from[target] = imp
                if target == start:
                    cycle, at = [], start
                    while True:
                        step = came_from[at]
                        cycle.append(step)
                        at = step.importer
                        if at == start:
                            return cycle[::-1]
                following.append(target)
        frontier = following
    raise AssertionError(f"no cycle through {start} in {members}")  # a component always has one


def test_no_import_cycles_between_files():
    graph = import_graph()
    violations = []
    for members in strongly_connected(graph):
        steps = " -> ".join(f"{imp.where()} imports {imp.target}" for imp in shortest_cycle(graph, members))
        violations.append(f"import cycle among {len(members)} modules ({', '.join(members)}): {steps}")
    assert not violations, f"{len(violations)} import cycle(s):\n" + "\n".join(violations)


def test_few_imports_of_project_modules_inside_functions():
    inside = [imp for imp in IMPORTS
              if imp.in_function and imp.importer != "dealerbox.cli" and not is_commands(imp.importer)]
    statements = sorted({(imp.path, imp.line): imp for imp in inside}.values(), key=lambda i: (i.path, i.line))
    listing = "\n".join(f"{imp.where()}: imports {imp.target} inside a function" for imp in statements)
    assert len(statements) <= FUNCTION_IMPORTS_ALLOWED, (
        f"{len(statements)} function-level imports of project modules outside dealerbox/cli.py and the "
        f"commands modules; at most {FUNCTION_IMPORTS_ALLOWED} are allowed (import at module level; "
        f"a cycle is broken by moving code, not by hiding the import):\n{listing}")


#: The floor's parts, each a package of dealerbox/floor/ (docs/ARCHITECTURE.md).
FLOOR_PARTS = ("collecting", "store", "migrations", "telling", "protect", "operating", "web", "terminal")


def floor_part(module: str) -> str | None:
    """The floor package a module belongs to; None outside them (the commands, the leaf
    vocabulary (:data:`FLOOR_VOCABULARY`) and everything outside the floor)."""
    parts = module.split(".")
    if parts[:2] != ["dealerbox", "floor"] or len(parts) < 3 or parts[2] not in FLOOR_PARTS:
        return None
    return parts[2]


#: The floor root's leaves of vocabulary that every part may use: the bridges' alert names, the
#: catalogs' mark and the alerts' texts (told by the collector and the protection, read back by
#: the pages). They import nothing of the project but each other.
FLOOR_VOCABULARY = ("dealerbox.floor.bridge_alerts", "dealerbox.floor.marks", "dealerbox.floor.alert_texts")


def test_every_floor_module_lives_in_a_part():
    # The floor's root keeps its commands, the package's docstring and its leaves of vocabulary.
    loose = sorted(name for name in FILES
                   if within(name, "dealerbox.floor") and floor_part(name) is None
                   and name not in {"dealerbox.floor", "dealerbox.floor.commands", *FLOOR_VOCABULARY})
    assert not loose, f"floor modules outside the parts {FLOOR_PARTS}: {loose}"
    leaf = [imp for imp in IMPORTS if imp.importer in FLOOR_VOCABULARY and not within(imp.target, *FLOOR_VOCABULARY)]
    assert not leaf, f"the floor's vocabulary {FLOOR_VOCABULARY} must import nothing else of the project: {leaf}"


def test_no_import_cycles_between_the_floor_parts():
    graph: dict[str, dict[str, Import]] = {part: {} for part in FLOOR_PARTS}
    for imp in IMPORTS:
        target = reached(imp.target)
        source, sink = floor_part(imp.importer), floor_part(target or "")
        if imp.type_checking or source is None or sink is None or source == sink:
            continue
        graph[source].setdefault(sink, imp)
    assert graph["collecting"] and graph["web"], "the floor's parts import each other: the graph is read"
    violations = []
    for members in strongly_connected(graph):
        # Every import between the members, one statement each: the cycle is among them.
        edges = "; ".join(f"{source} -> {sink} ({imp.where()} imports {imp.target})"
                          for source in members for sink, imp in sorted(graph[source].items()) if sink in members)
        violations.append(f"import cycle among the floor's parts {', '.join(members)}: {edges}")
    assert not violations, "\n".join(violations)
