"""Logging for the suite: stderr and a rotating file, one JSON line per tool call.

stdout belongs to the protocol, so no handler here ever writes to it.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["JsonFormatter", "log_dir", "setup_logging"]

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def __init__(self, server: str):
        super().__init__()
        self.server = server

    def format(self, record: logging.LogRecord) -> str:
        # Both handlers (stderr, file) format the same record: do the work once.
        cached = record.__dict__.get("_llmem_json")
        if isinstance(cached, str):
            return cached
        line: dict[str, Any] = {
            "ts": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "server": self.server,
            "logger": record.name,
            "msg": record.getMessage(),
        }
        line.update({k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")})
        if record.exc_info:
            line["traceback"] = self.formatException(record.exc_info)
        text = json.dumps(line, default=str, ensure_ascii=False)
        record.__dict__["_llmem_json"] = text
        return text


def log_dir() -> Path:
    """``LLMEM_LOG_DIR`` if set, else the platform's user log folder for llmem."""
    override = os.environ.get("LLMEM_LOG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_log_dir("llmem", appauthor=False))


def setup_logging(server: str, level: str = "info") -> Path | None:
    """Send every log record to stderr and to ``<log dir>/<server>.log``; return the file's path."""
    import time

    logging.Formatter.converter = time.gmtime
    # The logging HOWTO's "Optimization" switches: the JSON lines carry none of these fields,
    # and gathering them (the caller's frame above all) is most of the cost of a call's line.
    logging._srcfile = None
    logging.logThreads = False
    logging.logProcesses = False
    logging.logMultiprocessing = False
    root = logging.getLogger()
    for handler in list(root.handlers):
        root.removeHandler(handler)
    root.setLevel(level.upper())
    formatter = JsonFormatter(server)
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(formatter)
    root.addHandler(stderr)
    path: Path | None = log_dir() / f"{server}.log"
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler = logging.handlers.RotatingFileHandler(
            path, maxBytes=5_000_000, backupCount=3, encoding="utf-8", delay=True
        )
        file_handler.setFormatter(formatter)
        root.addHandler(file_handler)
    except OSError as exc:  # a read-only home must not stop the server
        logging.getLogger("llmem").warning("log file disabled: %s", exc)
        path = None
    return path
