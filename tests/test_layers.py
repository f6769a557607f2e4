"""Imports run one way: helpers <- core <- data <- engine <- experiments <- reports <- facades.

import-linter (``[tool.importlinter]`` in pyproject.toml) holds the contract for module-level imports. It does
not see imports written inside functions, so this file reads every module's syntax tree and checks, counting
those too, that no module imports a higher layer, that no two modules import each other through any chain,
and that an import inside a function is there only to defer an optional heavy dependency (torch,
torch_geometric, optuna, ray, matplotlib, statsmodels) that the importing module does not load already. Imports
under ``if TYPE_CHECKING:`` serve annotations only and never run, so they do not count.
"""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hpstrat_lite"

#: Rank of each top-level part of the package: a module may import only from its own rank or a lower one.
LAYERS = {"_version": 0, "_names": 0, "_io": 0, "_format": 0, "palette": 0, "_extras": 0, "_host": 0, "_prefetch": 0, "protocol": 0, "rows": 0,
          "stats": 0.5, "core": 1, "data": 2, "engine": 3, "experiments": 4, "auditing": 6, "audit_report": 7, "cli": 8}
#: Optional dependencies a module may import inside a function, so that importing it does not load them.
HEAVY = ("torch", "torch_geometric", "optuna", "ray", "matplotlib", "statsmodels")


def _modules(package: Path = PACKAGE) -> dict[str, Path]:
    out = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        out[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict) -> list[tuple[str, bool, int]]:
    """``(target, inside a function, line)`` for every import in module ``name``: package modules by their dotted
    name, other packages by their top-level name; a call ``require("torch", ...)`` counts as importing torch."""
    tree = ast.parse(path.read_text())
    base = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    nested, typing_only = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            nested |= {id(n) for n in ast.walk(node) if n is not node}
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):  # annotations only: never run
            typing_only |= {id(n) for stmt in node.body for n in ast.walk(stmt)}
    out = []
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        inside = id(node) in nested
        if isinstance(node, ast.ImportFrom):
            target = ".".join(base[:len(base) - node.level + 1] + ([node.module] if node.module else [])) \
                if node.level else node.module or ""
            found = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            for t in found or [target]:
                out.append((t if t in modules else t.partition(".")[0], inside, node.lineno))
        elif isinstance(node, ast.Import):
            for a in node.names:
                out.append((a.name if a.name in modules else a.name.partition(".")[0], inside, node.lineno))
        elif (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require" and node.args
              and isinstance(node.args[0], ast.Constant)):
            out.append((str(node.args[0].value).partition(".")[0], inside, node.lineno))
    return [(t, inside, line) for t, inside, line in out if t != name]


def import_graph(package: Path = PACKAGE):
    """``(modules, imports)``: the package's modules and, for each, its imports as :func:`_imports` gives them."""
    modules = _modules(package)
    return modules, {name: _imports(name, path, modules) for name, path in modules.items()}


def _parents(name: str, modules) -> list[str]:
    parts = name.split(".")
    return [p for p in (".".join(parts[:i]) for i in range(1, len(parts))) if p in modules]


def heavy_loads(modules, imports) -> dict[str, set]:
    """The optional heavy dependencies that importing each module loads (module-level imports, followed
    through the package's modules and their parent packages)."""
    memo: dict[str, set] = {}

    def visit(name, stack=()):
        if name in memo:
            return memo[name]
        if name in stack:
            return set()
        found = set()
        for target, inside, _ in imports[name]:
            if inside:
                continue
            if target in modules:
                found |= visit(target, stack + (name,))
                for parent in _parents(target, modules):
                    found |= visit(parent, stack + (name,))
            elif target in HEAVY:
                found.add(target)
        memo[name] = found
        return found

    return {name: visit(name) for name in modules}


def _rank(name: str) -> int:
    parts = name.split(".")
    return LAYERS.get(parts[1], 9) if len(parts) > 1 else 9


def upward_imports(modules, imports) -> list[str]:
    return [f"{a}:{line} imports {b}" for a, targets in imports.items() for b, _, line in targets
            if b in modules and _rank(b) > _rank(a)]


def cycles(modules, imports) -> list[list[str]]:
    """The strongly connected components (more than one module) of the import graph, function-level imports
    counted (Tarjan's algorithm)."""
    edges = {a: sorted({b for b, _, _ in targets if b in modules}) for a, targets in imports.items()}
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in edges:
        if v not in index:
            connect(v)
    return out


def deferred_without_reason(modules, imports) -> list[str]:
    """Imports of the package's own modules written inside a function although the imported module loads no
    optional heavy dependency that the importing module does not load already."""
    heavy = heavy_loads(modules, imports)
    bad = []
    for a, targets in imports.items():
        for b, inside, line in targets:
            if inside and b in modules:
                brings = heavy[b] | {d for p in _parents(b, modules) for d in heavy[p]}
                if not brings - heavy[a]:
                    bad.append(f"{a}:{line} imports {b} inside a function")
    return bad


# ----------------------------------------------------------------------------------------------
# The package's own import graph
# ----------------------------------------------------------------------------------------------

def test_no_module_imports_a_higher_layer():
    assert upward_imports(*import_graph()) == []


def test_no_import_cycle_between_modules():
    assert cycles(*import_graph()) == []


def test_imports_inside_functions_only_defer_heavy_dependencies():
    assert deferred_without_reason(*import_graph()) == []


def test_core_loads_no_heavy_dependency():
    modules, imports = import_graph()
    heavy = heavy_loads(modules, imports)
    assert {m: heavy[m] for m in modules if m.startswith("hpstrat_lite.core") and heavy[m]} == {}


@pytest.mark.parametrize("module", ["hpstrat_book.necessity", "hpstrat_book.hpstrat",
                                    "hpstrat_book.controls", "hpstrat_lite.rows"])
def test_reading_rows_and_tables_loads_no_torch_optuna_or_ray(module):
    probe = (f"import sys, {module}; "
             "print(sorted(m for m in ('torch', 'optuna', 'ray') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed (the [test] extra brings it)")
    out = subprocess.run([exe, "--no-cache"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr


# ----------------------------------------------------------------------------------------------
# The checks themselves, on a small package written here
# ----------------------------------------------------------------------------------------------

def _package(tmp_path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = tmp_path / "hpstrat_lite" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path / "hpstrat_lite"


def test_checks_find_a_cycle_through_a_function_level_import(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "data/__init__.py": "",
                              "data/a.py": "from .b import f\n",
                              "data/b.py": "def f():\n    from .a import g\n"})
    modules, imports = import_graph(pkg)
    assert cycles(modules, imports) == [["hpstrat_lite.data.a", "hpstrat_lite.data.b"]]
    assert deferred_without_reason(modules, imports) == ["hpstrat_lite.data.b:2 imports hpstrat_lite.data.a "
                                                         "inside a function"]


def test_checks_find_an_upward_import_and_allow_deferring_torch(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "core/__init__.py": "", "engine/__init__.py": "import torch\n",
                              "engine/train.py": "x = 1\n",
                              "core/bad.py": "from ..engine.train import x\n",
                              "reports/__init__.py": "",
                              "reports/ok.py": "def f():\n    from ..engine.train import x\n"})
    modules, imports = import_graph(pkg)
    assert upward_imports(modules, imports) == ["hpstrat_lite.core.bad:1 imports hpstrat_lite.engine.train"]
    assert heavy_loads(modules, imports)["hpstrat_lite.core.bad"] == {"torch"}
    assert deferred_without_reason(modules, imports) == []


def test_imports_for_annotations_only_do_not_count(tmp_path):
    pkg = _package(tmp_path, {"__init__.py": "", "engine/__init__.py": "import torch\n", "engine/train.py": "x = 1\n",
                              "reports/__init__.py": "",
                              "reports/ok.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                "    import torch\n    from ..engine.train import x\n"
                                                "def f():\n    from ..engine.train import x\n"),
                              "reports/bad.py": "import torch\ndef f():\n    from ..engine.train import x\n"})
    modules, imports = import_graph(pkg)
    assert heavy_loads(modules, imports)["hpstrat_lite.reports.ok"] == set()
    assert deferred_without_reason(modules, imports) == ["hpstrat_lite.reports.bad:3 imports "
                                                         "hpstrat_lite.engine.train inside a function"]
