"""The tour's transcript: what each step says, and how a step fails (shared by ``tour.py`` and its
sensor and window steps, ``tour_sensors.py``)."""

from __future__ import annotations

from typing import Any

from llmem.host import ToolResult

YARD_M = 0.9144


class StepFailed(Exception):
    """A tool answered with an error where the tour expected success, or a figure was wrong."""


def say(ms: float | None, text: str) -> None:
    stamp = f"[{ms:8.1f} ms]" if ms is not None else " " * 13
    print(f"{stamp} {text}", flush=True)


def section(title: str) -> None:
    print(f"\n── {title} " + "─" * max(3, 88 - len(title)), flush=True)


def error_of(result: ToolResult) -> str:
    found = result.structured.get("error")
    err: dict[str, Any] = found if isinstance(found, dict) else {}
    return f"{err.get('code', 'ERROR')}: {err.get('message', result.text[:300])}"


def ok(result: ToolResult, what: str) -> dict[str, Any]:
    if result.is_error:
        raise StepFailed(f"{what} failed: {error_of(result)}")
    return result.structured


def hm(iso: str) -> str:
    """``2025-03-14T10:42:29.998Z`` → ``10:42:30Z``."""
    hh, mm, ss = iso[11:13], iso[14:16], float(iso[17:].rstrip("Z"))
    total = int(hh) * 3600 + int(mm) * 60 + round(ss)
    return f"{total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}Z"


def seconds(iso: str) -> float:
    """Seconds into the day of an ISO-8601 time (the tour's times are all on one day)."""
    return int(iso[11:13]) * 3600 + int(iso[14:16]) * 60 + float(iso[17:].rstrip("Z"))


def check(condition: bool, what: str) -> None:
    if not condition:
        raise StepFailed(what)


def dm(deg: float) -> str:
    """A course or bearing as the tour prints it: ``062.0°``."""
    return f"{deg:05.1f}°"
