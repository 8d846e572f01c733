"""Issue 36: a language is data (its pack, its ``Language`` object, the learned model's ``TRAINED`` row), so the
resolver's code names no language. This scans the resolver's packages for a comparison with a language code."""

from __future__ import annotations

import ast
from pathlib import Path

import convsearch

SRC = Path(convsearch.__file__).parent
# the offline resolver, the learned resolver and the rewriter contract; language packs (lang/) and measurement
# code (eval/) may name their languages
CHECKED = ("resolve", "learned", "rewrite")
CODES = {"zh", "en", "es"}


def _branches(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        consts = [s for s in sides if isinstance(s, ast.Constant) and s.value in CODES]
        consts += [e for s in sides if isinstance(s, (ast.Tuple, ast.Set, ast.List)) for e in s.elts
                   if isinstance(e, ast.Constant) and e.value in CODES]
        if consts:
            found.append(f"{path.relative_to(SRC)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_comparison_with_a_language_code_in_the_resolver():
    found = [b for pkg in CHECKED for p in sorted((SRC / pkg).rglob("*.py")) for b in _branches(p)]
    assert found == []


def test_the_scan_finds_a_branch(tmp_path):
    p = tmp_path / "x.py"
    p.write_text('def f(lang):\n    return 1 if lang == "zh" else 2 if lang in ("en", "fr") else 3\n', encoding="utf-8")
    saved = globals()["SRC"]
    globals()["SRC"] = tmp_path
    try:
        assert len(_branches(p)) == 2
    finally:
        globals()["SRC"] = saved
