"""Logging: JSON lines on stderr and in a rotating file, never on stdout."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmem import logsetup


@pytest.fixture
def logging_to(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("LLMEM_LOG_DIR", str(tmp_path / "logs"))
    root = logging.getLogger()
    saved, level = list(root.handlers), root.level
    yield tmp_path / "logs"
    for handler in list(root.handlers):
        handler.close()
        root.removeHandler(handler)
    for handler in saved:
        root.addHandler(handler)
    root.setLevel(level)


def test_a_call_line_goes_to_stderr_and_the_file_as_json(logging_to: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = logsetup.setup_logging("llmem-mcp", "info")
    assert path == logging_to / "llmem-mcp.log"
    extra = {"tool": "get_artifact", "correlation_id": "t-1", "duration_ms": 1.5, "success": False}
    logging.getLogger("llmem.calls").info("tool call", extra={**extra, "error_code": "X", "step": 2})
    out, err = capsys.readouterr()
    assert out == ""
    line = json.loads(err.strip())
    assert line | {"ts": "-"} == {
        "ts": "-",
        "level": "info",
        "server": "llmem-mcp",
        "logger": "llmem.calls",
        "msg": "tool call",
        **extra,
        "error_code": "X",
        "step": 2,
    }
    assert line["ts"].endswith("Z") and "T" in line["ts"]
    assert path.read_text(encoding="utf-8").splitlines() == [err.strip()]


def test_the_file_rotates_at_its_size_limit(logging_to: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = logsetup.setup_logging("llmem-mcp", "info")
    assert path is not None
    handler = next(h for h in logging.getLogger().handlers if isinstance(h, logging.FileHandler))
    monkeypatch.setattr(handler, "maxBytes", 2_000)
    log = logging.getLogger("llmem.test")
    for i in range(100):
        log.info("line %d %s", i, "x" * 50)
    sizes = [p.stat().st_size for p in sorted(logging_to.glob("llmem-mcp.log*"))]
    assert len(sizes) == 4  # the live file and backupCount=3 rotated ones
    assert all(size <= 2_000 for size in sizes)
    last = json.loads(path.read_text(encoding="utf-8").splitlines()[-1])
    assert last["msg"] == "line 99 " + "x" * 50
