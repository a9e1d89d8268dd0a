"""Logging: JSON lines on stderr and in a rotating file, never on stdout."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmem.core import logsetup


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


def test_timestamps_are_the_records_own_in_utc_to_the_millisecond(logging_to: Path) -> None:
    import time

    formatter = logsetup.JsonFormatter("llmem-mcp")
    for created in (0.0, 1_795_000_000.0009, 1_795_000_000.9999, 1_795_000_001.5):
        record = logging.LogRecord("llmem.test", logging.INFO, "", 0, "m", (), None)
        record.created = created
        expected = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(int(created)))
        expected += f".{int((created - int(created)) * 1000):03d}Z"
        assert json.loads(formatter.format(record))["ts"] == expected


def test_lines_other_processes_append_count_toward_the_rollover(
    logging_to: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = logsetup.setup_logging("llmem-mcp", "info")
    assert path is not None
    handler = next(h for h in logging.getLogger().handlers if isinstance(h, logsetup.SizeRotatingFileHandler))
    monkeypatch.setattr(handler, "maxBytes", 50_000)
    log = logging.getLogger("llmem.test")
    log.info("first")
    with path.open("a", encoding="utf-8") as other:  # another server process sharing the file
        other.write(json.dumps({"msg": "x" * 60_000}) + "\n")
    for i in range(handler.SYNC_EVERY + 1):
        log.info("line %d", i)
    rotated = path.with_name(path.name + ".1")
    assert rotated.exists(), "the file past its limit was not rolled over"
    assert "x" * 100 in rotated.read_text(encoding="utf-8")


def test_a_log_file_that_is_not_a_regular_file_is_never_rolled(tmp_path: Path) -> None:
    handler = logsetup.SizeRotatingFileHandler(os.devnull, maxBytes=10, backupCount=1, delay=True)
    handler.setFormatter(logsetup.JsonFormatter("llmem-mcp"))
    try:
        for _ in range(5):
            record = logging.LogRecord("llmem.test", logging.INFO, "", 0, "x" * 100, (), None)
            assert handler.shouldRollover(record) is False
            handler.emit(record)
    finally:
        handler.close()
