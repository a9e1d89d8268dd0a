"""A note of httpx/_api.py that names a method of httpx/_models.py: after the method is renamed
(no parse since), the refresh prompt names the new name the store knows, shows the old note text,
and counts what it asks right (tests/data/httpx)."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from tests._httpx import CLIENT, attribute_uses, httpx_workspace, rename_method, service

API = "httpx/_api.py"


def test_the_refresh_prompt_of_a_note_naming_a_renamed_method(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    svc = service(ws)
    svc.parse(".")
    out = svc.prompt(API, "annotate", symbols=["request", "get"])
    assert out.callbackArgs is not None
    old = {
        "request": {"description": "Sends one request; callers check the answer with Response.raise_for_status."},
        "get": {"description": "A GET through request.", "inputs": "url, params, headers"},
    }
    stored = svc.store_result(**out.callbackArgs, result=json.dumps({"symbols": old}), model="t")
    assert stored.status == "success", stored
    rename_method(ws, "raise_for_status", "check_status")
    svc.parse(".")  # the parse sees the method go and remembers what it became
    out = service(ws).prompt(API, "annotate")
    prompt, data = out.promptForHostLLM, out.data
    assert prompt is not None and data is not None
    asked = re.findall(r"^- (\S+)$", prompt.split("these qualified names:\n")[1], re.MULTILINE)
    assert "request" in asked and "get" not in asked  # get names nothing that changed: kept
    assert data["already_described"] == 1 and data["described_but_stale"] == 1
    assert data["not_yet_described"] == len(asked) - 1
    # Renamed where it is defined only: its uses (ast's x.raise_for_status) still name it.
    left = attribute_uses(ws, "raise_for_status")
    assert (
        "`Response.raise_for_status` (httpx/_models.py#Response.raise_for_status): the rename is not finished — "
        f"its definition is now `Response.check_status`, but {len(left)} use(s) still name the old" in prompt
    )
    before = prompt.split("What their notes said before")[1]
    assert f"- `request`: {old['request']['description']}" in before


def test_a_parameter_named_in_a_note_is_no_dependency_on_a_property_of_that_name(tmp_path: Path) -> None:
    ws = httpx_workspace(tmp_path)
    svc = service(ws)
    svc.parse(".")
    tree = ast.parse((ws / API).read_text("utf-8"))
    [request] = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "request"]
    params = {a.arg for a in request.args.args + request.args.kwonlyargs}
    assert {"timeout", "trust_env"} <= params  # and BaseClient has properties of those names:
    assert {"timeout", "trust_env"} <= {
        f.name for f in ast.walk(ast.parse((ws / CLIENT).read_text("utf-8"))) if isinstance(f, ast.FunctionDef)
    }
    out = svc.prompt(API, "annotate", symbols=["request"])
    assert out.callbackArgs is not None
    note = "Opens `with Client(cookies, proxy, verify, timeout, trust_env)` and returns `Client.request`'s answer."
    answer = {"symbols": {"request": {"description": note}}}
    assert svc.store_result(**out.callbackArgs, result=json.dumps(answer), model="t").status == "success"
    deps = svc.store.get("llmem", API, "annotate").doc["depends_on"]
    assert {d["symbol"] for d in deps} == {"Client", "Client.request"}
