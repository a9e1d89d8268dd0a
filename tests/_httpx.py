"""The httpx workspace of the tests (tests/data/httpx, copied into tmp_path), its edits, and ``ast``
as the reference for where a name is used."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import ROOT

HTTPX = ROOT / "tests" / "data" / "httpx"
MODELS = "httpx/_models.py"
CLIENT = "httpx/_client.py"


def httpx_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(HTTPX, ws)
    return ws


def service(ws: Path, limits: Limits | None = None) -> Llmem:
    """A new service (as a new process makes) on ``ws``."""
    return Llmem(ArtifactStore(ws / ".llmem", ws), limits or Limits())


def rename_method(ws: Path, old: str, new: str, file: str = MODELS) -> None:
    path = ws / file
    text = path.read_text("utf-8")
    assert text.count(f"def {old}(") == 1
    path.write_text(text.replace(f"def {old}(", f"def {new}("), encoding="utf-8")


def attribute_uses(ws: Path, name: str, where: str = "", calls_only: bool = False) -> set[tuple[str, int]]:
    """Every ``x.name`` (``x.name(...)`` with ``calls_only``) in the Python files under ``where``
    (ast: not the words in docstrings and comments)."""
    found = set()
    for file in (ws / where).rglob("*.py"):
        if ".llmem" in file.parts:
            continue
        for node in ast.walk(ast.parse(file.read_text("utf-8"))):
            target = node.func if isinstance(node, ast.Call) else None if calls_only else node
            if isinstance(target, ast.Attribute) and target.attr == name:
                found.add((file.relative_to(ws).as_posix(), node.lineno))
    return found
