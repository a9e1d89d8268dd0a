"""generate_prompt(path, 'annotate', symbols=[...]): a prompt for notes on just those symbols
(and their members), whatever part of a large file they are in, the other notes kept; on an
excerpt of simonw/sqlite-utils (tests/data/sqlite-utils), the shown code checked with ``ast``."""

from __future__ import annotations

import ast
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.errors import InvalidArgument
from llmem.core.store import ArtifactStore
from tests.conftest import MODES, call, llmem_client

DB = "sqlite_utils/db.py"


def methods_of(ws: Path, path: str = DB) -> dict[str, str]:
    """Every method of the classes of ``path`` (db.py) by ``ast``: qualified name → its source."""
    source = (ws / path).read_text("utf-8")
    out = {}
    for cls in ast.parse(source).body:
        if isinstance(cls, ast.ClassDef):
            for fn in cls.body:
                if isinstance(fn, ast.FunctionDef):
                    out[f"{cls.name}.{fn.name}"] = ast.get_source_segment(source, fn) or ""
    return out


def _store(svc: Llmem, out: object, notes: dict[str, str]) -> None:
    args = getattr(out, "callbackArgs", None)
    assert args is not None
    answer = {"symbols": {k: {"description": v} for k, v in notes.items()}}
    assert svc.store_result(**args, result=json.dumps(answer), model="t").status == "success"


def test_a_prompt_for_a_few_symbols(sqlite_utils_ws: Path) -> None:
    ws = sqlite_utils_ws
    svc = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    methods = methods_of(ws)
    whole = svc.prompt(DB, "annotate")
    assert whole.data is not None and whole.data["parts"] >= 2  # the file takes several prompts
    out = svc.prompt(DB, "annotate", symbols=["Table.lookup", "reset_counts"])
    prompt, data = out.promptForHostLLM or "", out.data or {}
    assert data["part"] == data["parts"] == 1 and data["file_parts"] == whole.data["parts"]
    assert data["only_symbols"] == ["Database.reset_counts", "Table.lookup"]  # in source order
    assert all(methods[name] in prompt for name in data["only_symbols"])  # their code, whole
    assert not [n for n in methods if n not in data["only_symbols"] and methods[n] in prompt]  # no other
    _store(svc, out, {"Table.lookup": "Finds or inserts a row.", "Database.reset_counts": "Recounts."})
    # A body bigger than a prompt (insert_all: 357 lines) is shown from its start, the cut said.
    big = svc.prompt(DB, "annotate", symbols=["Table.insert_all"]).promptForHostLLM or ""
    head = methods["Table.insert_all"].splitlines()
    assert all(line in big for line in head[:100]) and "left out for size" in big
    assert len(prompt) < len(whole.promptForHostLLM or "")
    _store(svc, svc.prompt(DB, "annotate", symbols=["insert_all"]), {"Table.insert_all": "Writes in batches."})
    kept = svc.get(DB, "annotate", 0, None)["content"]["symbols"]
    assert set(kept) == {"Table.insert_all", "Database.reset_counts", "Table.lookup"}
    with pytest.raises(InvalidArgument) as err:
        svc.prompt(DB, "annotate", symbols=["Table.lookup_or_insert"])
    assert "Table.lookup" in err.value.details["close_matches"]
    with pytest.raises(InvalidArgument):
        svc.prompt(DB, "summarize", symbols=["Table.lookup"])


@pytest.fixture(params=MODES)
async def client(request: pytest.FixtureRequest, sqlite_utils_ws: Path) -> AsyncIterator[Client]:
    async with llmem_client(sqlite_utils_ws, request.param) as c:
        yield c


@pytest.mark.anyio
async def test_a_prompt_for_a_few_symbols_through_the_server(client: Client) -> None:
    err, out = await call(client, "generate_prompt", path=DB, task="annotate", symbols=["Table.lookup"])
    assert not err and out["data"]["only_symbols"] == ["Table.lookup"] and out["data"]["parts"] == 1
    note = {"symbols": {"Table.lookup": {"description": "Finds or inserts a row."}}}
    err, stored = await call(client, "store_llm_result", **out["callbackArgs"], result=json.dumps(note))
    assert not err and stored["data"]["stored"] == ["Table.lookup"]
