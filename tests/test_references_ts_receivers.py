"""TypeScript members judged by their receiver (trial t23c, finding 4).

On real code of sindresorhus/ky (tests/data/ky, copied unchanged): ``Ky.create`` is a static
method; its uses are ``Ky.create(…)`` through the imported class (source/index.ts), not
``ky.create(…)`` on the default export (a ``KyInstance`` made by ``createInstance()``), not
``ky.create = …`` (an attribute set on a ``Partial<Mutable<KyInstance>>``), not ``Object.create``.
Checked against grep (regular expressions over the files), never against the tool's own output.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, ROOT, call, llmem_client

KY = ROOT / "tests" / "data" / "ky"
MEMORY = ROOT / "tests" / "data" / "servers-memory"
KY_TS = "source/core/Ky.ts"


def _grep(ws: Path, pattern: str) -> set[tuple[str, int]]:
    """(path, line) of every line of the workspace's files matching ``pattern``."""
    out: set[tuple[str, int]] = set()
    for file in ws.rglob("*"):
        if file.is_file() and ".llmem" not in file.parts:
            for n, line in enumerate(file.read_text("utf-8", "replace").splitlines(), 1):
                if re.search(pattern, line):
                    out.add((file.relative_to(ws).as_posix(), n))
    return out


def _words(ws: Path, word: str) -> int:
    """How many times ``grep -ow word`` finds ``word`` in the workspace's files."""
    return sum(
        len(re.findall(rf"(?<![\w]){word}(?![\w])", f.read_text("utf-8", "replace")))
        for f in ws.rglob("*")
        if f.is_file() and ".llmem" not in f.parts
    )


def _svc(ws: Path) -> Llmem:
    return Llmem(ArtifactStore(ws / ".llmem", ws), Limits(answer_chars=400_000))


def _lines(answer: dict[str, Any], kinds: tuple[str, ...] = ("call", "reference")) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["results"] if r["kind"] in kinds}


@pytest.fixture
def ky(tmp_path: Path) -> Path:
    ws = tmp_path / "ky"
    shutil.copytree(KY, ws)
    return ws


def test_a_static_method_is_used_through_its_class_only(ky: Path) -> None:
    out = _svc(ky).references("Ky.create", KY_TS, None, 500, None)
    through_class = _grep(ky, r"\bKy\.create\(")
    assert through_class == {("source/index.ts", 12), ("source/index.ts", 16)}
    assert _lines(out) == through_class
    assert "uncertain" not in out  # Ky is the imported class itself: certain
    elsewhere = _grep(ky, r"\b(ky|Object)\.create\b")
    assert len(elsewhere) >= 6 and not elsewhere & _lines(out)  # ky.create(...), ky.create = ..., Object.create
    # every word grep finds is a use, a definition or counted in left_out
    assert out["total"] + out["left_out"]["count"] + len(out["definitions"]) == _words(ky, "create")


def test_receivers_of_every_kind(ky: Path) -> None:
    """An alias import and a subclass of the class are certain; an instance (typed through a
    wrapper, or new), a global and the default export are left out; an untyped parameter is
    uncertain and listed after the certain uses."""
    (ky / "source" / "extra.ts").write_text(
        "import {Ky as K} from './core/Ky.js';\n"  # 1
        "import kyDefault from './index.js';\n"  # 2
        "export class Sub extends K {}\n"  # 3
        "export function viaParam(k) { return k.create; }\n"  # 4 uncertain
        "export function viaTyped(k: Readonly<K> | undefined) { return k!.create; }\n"  # 5 instance: no
        "export const viaAlias = K.create;\n"  # 6 yes
        "export const viaSub = Sub.create;\n"  # 7 yes
        "const made = new K('x', {});\n"  # 8
        "export const viaNew = made.create;\n"  # 9 no
        "export const globals = [JSON.create, Math.create, kyDefault.create];\n"  # 10 no
    )
    out = _svc(ky).references("Ky.create", KY_TS, None, 500, None)
    results = [r for r in out["results"] if r["kind"] != "text"]
    got = {(r["path"], r["line"]): r.get("uncertain", False) for r in results}
    extra = {line: u for (p, line), u in got.items() if p == "source/extra.ts"}
    assert extra == {6: False, 7: False, 4: True}
    assert out["uncertain"] == 1
    assert results[-1]["path"] == "source/extra.ts" and results[-1]["line"] == 4  # uncertain last
    assert "no type annotation" in results[-1]["receiver"]
    static = out["left_out"]["by_reason"]
    assert any("static" in reason for reason in static)
    assert out["total"] + out["left_out"]["count"] + len(out["definitions"]) == _words(ky, "create")


def test_an_instance_member_through_new_and_typed_values(tmp_path: Path) -> None:
    ws = tmp_path / "mem"
    shutil.copytree(MEMORY, ws)
    (ws / "src" / "memory" / "other.ts").write_text(
        "import {KnowledgeGraphManager as M} from './index.js';\n"
        "class Other { createEntities() {} }\n"
        "export function a(m: M) { return m.createEntities([]); }\n"  # 3 yes
        "export function b(o: Other) { return o.createEntities(); }\n"  # 4 no: another class
        "export function c() { return M.createEntities; }\n"  # 5 no: not static
    )
    out = _svc(ws).references("KnowledgeGraphManager.createEntities", "src/memory/index.ts", None, 500, None)
    calls = _grep(ws, r"\bknowledgeGraphManager\.createEntities\(") | {("src/memory/other.ts", 3)}
    assert _lines(out) == calls and "uncertain" not in out
    assert out["total"] + out["left_out"]["count"] + len(out["definitions"]) == _words(ws, "createEntities")


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Client]:
    ws = tmp_path / "ky"
    shutil.copytree(KY, ws)
    async with llmem_client(ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_static_receivers_through_the_server(client: Client) -> None:
    err, out = await call(client, "find_references", symbol="Ky.create", path=KY_TS, kind="call")
    assert not err and {(r["path"], r["line"]) for r in out["data"]["results"]} == {
        ("source/index.ts", 12),
        ("source/index.ts", 16),
    }
    assert "uncertain" not in out["data"]
