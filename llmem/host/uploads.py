"""Files a person attaches on the page (REP, DSF, ``.plot.json`` and other text files), saved into
the workspace for the servers' tools to read, and the words that tell the model they are there.

A file's name is checked, never trusted: one plain name (no folder, no ``..``, not absolute, no
NUL or control character, not hidden, none of the characters Windows forbids), at most 255 bytes,
NFC-normalised; then resolved inside the workspace (a symlink of that name pointing out is
refused too). A file is written whole (a temporary file linked into place) and never over
another: a name that is taken is refused with a free one to suggest (``boat (2).rep``) unless
the page said to replace it, or unless the file there holds the very same bytes: then it is the
one attached (``unchanged``), and nothing is written. Text only: a file with NUL bytes in its first 8 KiB is refused.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from llmem.core.config import user_data_root
from llmem.core.errors import SuiteError
from llmem.core.fsutil import atomic_create_user_file, atomic_write_user_file
from llmem.core.paths import NAME_MAX, resolve_in_workspace

__all__ = ["DEFAULT_LIMIT", "SavedFile", "UploadRefused", "attachment_note", "check_name", "free_name", "save_upload"]

DEFAULT_LIMIT = 25 * 1024 * 1024
_FORBIDDEN = re.compile(r'[\x00-\x1f\x7f<>:"|?*/\\]')
_KINDS = {".rep": "REP file", ".dsf": "sensor (DSF) file", ".plot.json": "plot"}
_RESERVED = re.compile(r"^(con|prn|aux|nul|com\d|lpt\d)(\.|$)", re.IGNORECASE)


class UploadRefused(Exception):
    """A file not saved: ``status`` is the HTTP status (400 a bad name or content, 409 the name is
    taken, 413 too large); ``suggested`` a free name when it was taken."""

    def __init__(self, message: str, status: int, suggested: str | None = None) -> None:
        super().__init__(message)
        self.status, self.suggested = status, suggested


@dataclass(frozen=True)
class SavedFile:
    name: str  # relative to the workspace (a plain name: files go to its top folder)
    size: int
    kind: str  # "REP file", "plot", "sensor (DSF) file", "text file"
    replaced: bool
    unchanged: bool = False  # the workspace held this very file already: it is used, nothing written


def kind_of(name: str) -> str:
    lowered = name.lower()
    return next((kind for suffix, kind in _KINDS.items() if lowered.endswith(suffix)), "text file")


def check_name(name: str) -> str:
    """The name as it will be saved (NFC, spaces around it dropped), or ``UploadRefused`` saying
    which rule it breaks."""
    text = unicodedata.normalize("NFC", name).strip()

    def refuse(rule: str) -> UploadRefused:
        return UploadRefused(f"the file name {name!r} is refused: {rule}; give a plain file name like 'boat1.rep'", 400)

    if not text:
        raise refuse("it is empty")
    if "\x00" in text:
        raise refuse("it contains a NUL byte")
    if text in (".", "..") or "/" in text or "\\" in text:
        raise refuse("it names a folder or a path: only a plain file name is accepted, saved in the workspace")
    if _FORBIDDEN.search(text):
        raise refuse('it contains a control character or one of < > : " | ? *')
    if text.startswith("."):
        raise refuse("it is hidden (starts with '.'): such files hold settings, not data")
    if text.endswith((".", " ")) or _RESERVED.match(text):
        raise refuse("Windows cannot keep a file of that name")
    if len(text.encode("utf-8")) > NAME_MAX:
        raise refuse(f"it is longer than {NAME_MAX} bytes")
    return text


def _split(name: str) -> tuple[str, str]:
    """``boat.rep`` → (``boat``, ``.rep``); ``exercise.plot.json`` → (``exercise``, ``.plot.json``)."""
    if name.lower().endswith(".plot.json") and len(name) > len(".plot.json"):
        return name[: -len(".plot.json")], name[-len(".plot.json") :]
    stem, dot, suffix = name.rpartition(".")
    return (stem, dot + suffix) if stem else (name, "")


def free_name(workspace: Path, name: str) -> str:
    """The first of ``name (2).rep``, ``name (3).rep``, … that no file of the workspace has."""
    stem, suffix = _split(name)
    for n in range(2, 10_000):
        candidate = f"{stem} ({n}){suffix}"
        if not (workspace / candidate).exists():
            return candidate
    raise UploadRefused(f"no free name like {stem} (n){suffix} is left in the workspace", 409)


def save_upload(
    workspace: Path, name: str, data: bytes, *, overwrite: bool = False, limit: int = DEFAULT_LIMIT
) -> SavedFile:
    """Save ``data`` as ``name`` in the top folder of ``workspace`` (resolved), whole, or raise
    :class:`UploadRefused` and change nothing."""
    checked = check_name(name)
    if len(data) > limit:
        raise UploadRefused(f"{checked} is {len(data):,} bytes; the limit is {limit:,} (--max-upload-mb)", 413)
    if b"\x00" in data[:8192]:
        raise UploadRefused(
            f"{checked} is not a text file (it holds NUL bytes): attach REP, DSF, plot or text files", 400
        )
    try:
        target = resolve_in_workspace(workspace, checked).abs
    except SuiteError as exc:
        raise UploadRefused(str(exc), 400) from None
    if target.parent != workspace:  # a name resolving elsewhere (a symlink to a folder's file)
        raise UploadRefused(f"{checked} resolves to {target}, not to a file of the workspace's top folder", 400)
    if target.is_dir():
        raise UploadRefused(
            f"{checked} is a folder of the workspace; choose another name", 409, free_name(workspace, checked)
        )
    if target.is_file() and target.stat().st_size == len(data) and target.read_bytes() == data:
        return SavedFile(checked, len(data), kind_of(checked), replaced=False, unchanged=True)
    scratch = user_data_root() / "host" / "tmp"
    existed = target.exists()
    try:
        if overwrite:
            atomic_write_user_file(target, data, temp_dir=scratch)
        else:
            atomic_create_user_file(target, data, temp_dir=scratch)
    except FileExistsError:
        raise UploadRefused(
            f"{checked} is already in the workspace; replace it, or save this one under another name",
            409,
            free_name(workspace, checked),
        ) from None
    return SavedFile(checked, len(data), kind_of(checked), replaced=overwrite and existed)


def attachment_note(names: list[str], workspace: Path) -> str:
    """What the model reads after a question with files: where they are and what they are."""
    listed = ", ".join(f"`{n}` ({kind_of(n)})" for n in names)
    return (
        f"[The person attached {len(names)} file{'s' if len(names) != 1 else ''}, saved in the workspace "
        f"({workspace}) as: {listed}. The tools read them by these names.]"
    )
