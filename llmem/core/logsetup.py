"""Logging for the suite: stderr and a rotating file, one JSON line per tool call.

stdout belongs to the protocol, so no handler here ever writes to it. The file always gets JSON
lines; stderr gets them too, or (``stderr_format="text"``, for a person at a terminal) one human
line per record: the local time, the level when it is not info, the message and its fields.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["HumanFormatter", "JsonFormatter", "SizeRotatingFileHandler", "log_dir", "setup_logging"]

_STANDARD = set(logging.LogRecord("", 0, "", 0, "", (), None).__dict__) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    def __init__(self, server: str):
        super().__init__()
        self.server = server
        # (second, its "YYYY-mm-ddTHH:MM:SS"): strftime once a second, not once a record. One
        # tuple, replaced whole, so threads formatting at once never see half an update.
        self._second: tuple[int, str] = (-1, "")

    def _timestamp(self, created: float) -> str:
        second = int(created)
        cached = self._second
        if cached[0] != second:
            cached = self._second = (second, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second)))
        return f"{cached[1]}.{int((created - second) * 1000):03d}Z"

    def format(self, record: logging.LogRecord) -> str:
        # Both handlers (stderr, file) format the same record: do the work once.
        cached = record.__dict__.get("_llmem_json")
        if isinstance(cached, str):
            return cached
        line: dict[str, Any] = {
            "ts": self._timestamp(record.created),
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


class HumanFormatter(logging.Formatter):
    """One line a person reads: ``21:03:05 page connected (session=…, pages=1)``; warnings and
    errors say so (``21:03:05 error: …``); a message of several lines keeps them, indented."""

    def format(self, record: logging.LogRecord) -> str:
        fields = {
            k: v
            for k, v in record.__dict__.items()
            if k not in _STANDARD and not k.startswith("_") and k != "color_message" and v not in (None, "", "-")
        }
        level = "" if record.levelno == logging.INFO else f"{record.levelname.lower()}: "
        text = f"{time.strftime('%H:%M:%S', time.localtime(record.created))} {level}{record.getMessage()}"
        if fields:
            text += " (" + ", ".join(f"{k}={v}" for k, v in fields.items()) + ")"
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        return text.replace("\n", "\n    ")


class SizeRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """``RotatingFileHandler`` that counts what it writes instead of asking the file each record.

    The standard handler makes two ``stat`` calls and a seek before every record to decide on a
    rollover; a call's log line is on every tool call's path, so here the size is counted, and
    read back from the file (``fstat``) when the file is opened and every ``SYNC_EVERY`` records,
    so that lines other processes append to the same file are counted too. Files that are not
    regular (``/dev/null``, a FIFO) are never rolled over, as the standard handler ensures.
    """

    SYNC_EVERY = 100

    def __init__(self, filename: str | os.PathLike[str], **kwargs: Any):
        super().__init__(filename, **kwargs)
        self._size: int | None = None  # None: read it from the file at the next record
        self._unsynced = 0
        self._regular = True

    def shouldRollover(self, record: logging.LogRecord) -> bool:
        if self.stream is None:  # delay=True: opened at the first record
            self.stream = self._open()
        if self.maxBytes <= 0:
            return False
        if self._size is None or self._unsynced >= self.SYNC_EVERY:
            self.stream.flush()
            st = os.fstat(self.stream.fileno())
            self._regular = stat.S_ISREG(st.st_mode)
            self._size = st.st_size
            self._unsynced = 0
        if not self._regular:
            return False
        self._unsynced += 1
        # Characters, not bytes: exact for the ASCII the lines mostly are, and the next sync
        # corrects the rest.
        self._size += len(self.format(record)) + 1
        return self._size >= self.maxBytes

    def doRollover(self) -> None:
        super().doRollover()
        self._size = None


def log_dir() -> Path:
    """``LLMEM_LOG_DIR`` if set, else the platform's user log folder for llmem."""
    override = os.environ.get("LLMEM_LOG_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs

    return Path(platformdirs.user_log_dir("llmem", appauthor=False))


def setup_logging(server: str, level: str = "info", *, stderr_format: str = "json") -> Path | None:
    """Send every log record to stderr and to ``<log dir>/<server>.log``; return the file's path.
    ``stderr_format``: ``"json"`` (the file's lines) or ``"text"`` (:class:`HumanFormatter`)."""
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
    stderr.setFormatter(HumanFormatter() if stderr_format == "text" else formatter)
    root.addHandler(stderr)
    path: Path | None = log_dir() / f"{server}.log"
    try:
        assert path is not None
        path.parent.mkdir(parents=True, exist_ok=True)
        file_handler = SizeRotatingFileHandler(path, maxBytes=5_000_000, backupCount=3, encoding="utf-8", delay=True)
        file_handler.setFormatter(formatter)
        root.addHandler(file_handler)
    except OSError as exc:  # a read-only home must not stop the server
        logging.getLogger("llmem").warning("log file disabled: %s", exc)
        path = None
    return path
