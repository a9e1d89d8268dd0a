"""The documentation site builds with ``mkdocs build --strict`` (no broken link, no page left out
of the navigation, no warning), and what it makes from the code is there: every analysis tool of
the registry, every public method of the Python API, the host's protocol from its docstrings."""

from __future__ import annotations

import html
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

import debrief_calc as dc
from tests.conftest import ROOT, subprocess_env

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    built = subprocess.run(
        [str(mkdocs), "build", "--strict", "--site-dir", str(out), "--config-file", str(ROOT / "mkdocs.yml")],
        cwd=ROOT,
        env=subprocess_env(NO_MKDOCS_2_WARNING="1"),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    return out


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_every_page_is_built(site: Path) -> None:
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    for name in pages:
        built = site / ("index.html" if name == "index" else f"{name}/index.html")
        assert built.is_file(), name
        made = built.read_text(encoding="utf-8")
        assert not re.search(r"<!-- (docstring|analysis-tools|api)\b", made), name  # every part was made


def test_every_analysis_tool_is_on_its_page(site: Path) -> None:
    page = (site / "analysis-tools" / "index.html").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory() as folder:
        ws = dc.Workspace(folder, store=str(Path(folder) / "store"))
        tools = {t["name"]: ws.describe_tool(t["name"]).parameters for t in ws.list_tools().tools}
    assert len(tools) >= 12
    for name, parameters in tools.items():
        assert f'id="{name}"' in page, name
        for parameter in parameters:
            assert f"<code>{parameter['name']}</code>" in page, (name, parameter)


def test_every_public_method_of_the_python_api_is_on_its_page(site: Path) -> None:
    page = (site / "python-api" / "index.html").read_text(encoding="utf-8")
    public = [n for base in dc.Workspace.__mro__[:-1] for n in vars(base) if not n.startswith("_")]
    assert len(public) >= 25
    for name in public:
        assert f'id="{name}"' in page, name


def test_the_hosts_protocol_is_made_from_its_modules(site: Path) -> None:
    text = _text(site / "host-protocol" / "index.html")
    for said in ("edit {index, text, attachments?}", "regenerate {index}", "GET    /sessions?q=words", "POST   /files"):
        assert said in text, said
