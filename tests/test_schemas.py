"""Every tool's answers, successes and errors alike, satisfy the output schema it advertises.

Clients such as the TypeScript SDK check ``structuredContent`` against ``outputSchema`` even on
``isError`` results; an error shape the schema rejects would hide the error from them.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from llmem.core.config import ServerConfig
from llmem.core.errors import SuiteError

pytestmark = pytest.mark.anyio

FACTORIES = {
    "llmem-mcp": "llmem.code.server",
    "debrief-calc-mcp": "debrief_calc.calc.server",
    "debrief-state-mcp": "debrief_calc.state.server",
}


@pytest.mark.parametrize("script", FACTORIES)
async def test_error_answers_satisfy_every_output_schema(script: str, workspace: Path) -> None:
    server = importlib.import_module(FACTORIES[script]).build_server(ServerConfig(script, workspace))
    err = SuiteError("refused", code="SOME_CODE", details={"field": "x"})
    for tool in await server.list_tools():
        assert tool.output_schema is not None, tool.name
        Draft202012Validator.check_schema(tool.output_schema)
        result = server.error_answer(tool.name, err)
        Draft202012Validator(tool.output_schema).validate(result.structured_content)
