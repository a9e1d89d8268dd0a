"""The flask workspace of the tests (tests/data/flask, copied into tmp_path): ``src/flask/sansio/``
has no ``__init__.py`` (a namespace package inside ``flask``, PEP 420)."""

from __future__ import annotations

import shutil
from pathlib import Path

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import ROOT

FLASK = ROOT / "tests" / "data" / "flask"
APP = "src/flask/app.py"
SANSIO_APP = "src/flask/sansio/app.py"
HELPERS = "src/flask/helpers.py"


def flask_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    shutil.copytree(FLASK, ws)
    return ws


def service(ws: Path) -> Llmem:
    """A new service (as a new process makes) on ``ws``."""
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits())


def edit(ws: Path, file: str, old: str, new: str, count: int = 1) -> None:
    path = ws / file
    text = path.read_text("utf-8")
    assert text.count(old) == count, (file, old)
    path.write_text(text.replace(old, new), encoding="utf-8")


def lines_with(ws: Path, file: str, needle: str) -> set[int]:
    """The 1-based lines of ``file`` holding ``needle`` (grep)."""
    text = (ws / file).read_text("utf-8").splitlines()
    return {i for i, line in enumerate(text, 1) if needle in line}
