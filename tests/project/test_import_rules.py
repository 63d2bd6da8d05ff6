"""The tree's layers, checked from the imports of every module under articles/: the store,
the shared HTTP plumbing and the operations never import a front end (web/, api/), and the
two front ends never import each other."""

from __future__ import annotations

import ast
from pathlib import Path

ARTICLES = Path(__file__).resolve().parents[2] / "articles"

# package -> the packages it must never import
FORBIDDEN = {
    "articles.store": ("articles.web", "articles.api"),
    "articles.http": ("articles.web", "articles.api"),
    "articles.operations": ("articles.web", "articles.api"),
    "articles.web": ("articles.api",),
    "articles.api": ("articles.web",),
}


def module_name(path: Path) -> str:
    parts = path.relative_to(ARTICLES.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path) -> set[str]:
    """Every module `path` imports, at its top or inside a function (a lazy import is
    still a dependency)."""
    package = module_name(path).rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def test_no_layer_imports_what_it_must_not():
    broken = []
    for path in sorted(ARTICLES.rglob("*.py")):
        name = module_name(path)
        for package, forbidden in FORBIDDEN.items():
            if not within(name, package):
                continue
            for imported in sorted(imports_of(path)):
                if any(within(imported, bad) for bad in forbidden):
                    broken.append(f"{name} imports {imported}")
    assert broken == []


def test_the_check_sees_lazy_and_relative_imports(tmp_path):
    assert within("articles.web.rendering", "articles.web")
    assert not within("articles.webhooks", "articles.web")
    here = ARTICLES / "http" / "responses.py"
    assert "articles.errors" in imports_of(here)
