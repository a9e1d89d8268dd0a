"""Workspace containment: hostile paths are refused before anything is read."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from llmem.core.errors import InvalidArgument, PathOutsideWorkspace
from llmem.core.paths import resolve_in_workspace


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\n")
    secret = tmp_path / "ws_secret"
    secret.mkdir()
    (secret / "key.txt").write_text("secret")
    (ws / "out-link").symlink_to(secret)
    (ws / "in-link").symlink_to(ws / "src")
    return ws.resolve()


@pytest.mark.parametrize(
    ("path", "rule"),
    [
        ("../ws_secret/key.txt", "'..'"),
        ("src/../../ws_secret/key.txt", "'..'"),
        ("out-link/key.txt", "symlink"),
        ("out-link", "symlink"),
        ("/etc/passwd", "absolute"),
        ("src/a.py\x00.txt", "NUL"),
        ("C:\\Windows\\system.ini", "drive"),
        ("C:/Windows/system.ini", "drive"),
        ("\\\\server\\share\\x.py", "UNC"),
        ("//server/share/x.py", "UNC"),
        ("..\\..\\etc\\passwd", "'..'"),
    ],
)
def test_hostile_paths_are_refused(ws: Path, path: str, rule: str) -> None:
    with pytest.raises(PathOutsideWorkspace) as info:
        resolve_in_workspace(ws, path)
    assert rule.lower() in info.value.message.lower()
    assert info.value.details["field"] == "path"


def test_sibling_with_common_prefix_is_outside(ws: Path) -> None:
    sibling = str(ws.parent / "ws_secret" / "key.txt")
    assert sibling.startswith(str(ws))  # the trap a string-prefix check falls into
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, sibling)


def test_paths_inside_are_resolved_to_keys(ws: Path) -> None:
    assert resolve_in_workspace(ws, "src/a.py").key == "src/a.py"
    assert resolve_in_workspace(ws, "./src/../src/a.py").key == "src/a.py"
    assert resolve_in_workspace(ws, "src\\a.py").key == "src/a.py"
    assert resolve_in_workspace(ws, str(ws / "src" / "a.py")).key == "src/a.py"
    assert resolve_in_workspace(ws, "").key == "."
    assert resolve_in_workspace(ws, ".").key == "."
    assert resolve_in_workspace(ws, "in-link/a.py").key == "src/a.py"
    assert resolve_in_workspace(ws, "missing/new file ü.py").key == "missing/new file ü.py"


def test_over_long_and_non_string_paths(ws: Path) -> None:
    with pytest.raises(InvalidArgument):
        resolve_in_workspace(ws, "a/" * 3000)
    with pytest.raises(InvalidArgument):
        resolve_in_workspace(ws, 42)  # type: ignore[arg-type]


def test_symlink_loop_is_refused(ws: Path) -> None:
    os.symlink(ws / "loop", ws / "loop")
    with pytest.raises(PathOutsideWorkspace):
        resolve_in_workspace(ws, "loop/x")
