"""The generate_prompt → store_llm_result protocol (suite.md §5), shared by every server.

A server describes each of its LLM tasks as a :class:`PreparedPrompt` (what to ask, how the
answer must look, which source it depends on) and a validator. This module issues the
ticket, records it in the store so that the answer may come from another process, and on
the way back checks the ticket, the source, the size and the answer, counting attempts up to
``MAX_STEPS``.
"""

from __future__ import annotations

import hashlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from llmem.core.envelope import Envelope
from llmem.core.errors import (
    InvalidArgument,
    ResultInvalid,
    ResultTooLarge,
    SourceChanged,
    SuiteError,
    TicketError,
)
from llmem.core.fsutil import atomic_write_json, read_json
from llmem.core.store import ArtifactStore, Fingerprint, now_iso

__all__ = ["CallbackProtocol", "PreparedPrompt", "Validated"]

log = logging.getLogger("llmem.core.callback")

AnswerFormat = Literal["markdown", "json"]


@dataclass
class PreparedPrompt:
    """What ``generate_prompt`` hands the host for one task on one target."""

    task: str
    target: str  # the store key the answer will be written under
    kind: str  # the artifact kind it will be written as
    prompt: str
    answer_format: AnswerFormat
    source: Fingerprint | None = None
    context: dict[str, Any] = field(default_factory=dict)  # kept in the ticket for the validator
    summary: dict[str, Any] = field(default_factory=dict)  # returned as envelope data
    part: int | None = None  # one of several prompts that together cover the target
    #: what the model must be told whole (the answer format, the keys asked): the size cap never cuts it
    tail: str = ""


@dataclass
class Validated:
    content: Any
    fmt: str
    extra: dict[str, Any] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)  # added to the success envelope's data


Validator = Callable[[str, dict[str, Any]], Validated]
#: the current fingerprint of a ticket's source (the ticket document is given), None when it is gone
SourceProbe = Callable[[dict[str, Any]], Fingerprint | None]


def fit_prompt(body: str, tail: str, cap: int) -> tuple[str, dict[str, Any] | None]:
    """``body + tail`` within ``cap`` characters. Builders bound their own prompts; past the cap
    (the last line of defence) the body is cut at a line end, saying so in the prompt and in what
    is returned, and ``tail`` (the answer format, the keys asked) is always whole."""
    if len(body) + len(tail) <= cap:
        return body + tail, None
    marker = "\n[… {n} characters of the context above are left out for the size cap; what follows is whole …]\n"
    room = max(0, cap - len(tail) - len(marker) - 12)
    end = body.rfind("\n", 0, room)
    kept = body[: end if end > 0 else room]
    left_out = len(body) - len(kept)
    return kept + marker.format(n=left_out) + tail, {"chars_left_out": left_out, "cut_at": "the end of the context"}


class CallbackProtocol:
    """Ticket bookkeeping for one server: ``namespace`` in ``store``, produced by ``producer``."""

    def __init__(
        self,
        store: ArtifactStore,
        *,
        namespace: str,
        producer: str,
        target_field: str = "path",
        max_steps: int = 3,
        ticket_ttl_s: int = 3600,
        result_chars: int = 200_000,
        prompt_chars: int = 16_000,
        read_hint: str = "get_artifact({key!r}, kind={kind!r})",
    ):
        self.store = store
        self.namespace = namespace
        self.producer = producer
        self.target_field = target_field
        self.max_steps = max_steps
        self.ticket_ttl_s = ticket_ttl_s
        self.result_chars = result_chars
        self.prompt_chars = prompt_chars
        self.read_hint = read_hint

    # -- generate_prompt --------------------------------------------------------------------

    def issue(self, prepared: PreparedPrompt) -> Envelope:
        prompt, cut = fit_prompt(prepared.prompt, prepared.tail, self.prompt_chars)
        superseded, still_pending = self._supersede(prepared)
        ticket = uuid.uuid4().hex
        now = time.time()
        doc = {
            "ticket": ticket,
            "namespace": self.namespace,
            "path": prepared.target,
            "task": prepared.task,
            "kind": prepared.kind,
            "answer_format": prepared.answer_format,
            "source": prepared.source.to_dict() if prepared.source else None,
            "prompt_sha256": hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
            "created_at": now_iso(now),
            "expires_at": now_iso(now + self.ticket_ttl_s),
            "expires_at_ts": now + self.ticket_ttl_s,
            "steps": 0,
            "max_steps": self.max_steps,
            "state": "open",
            "producer": self.producer,
            "part": prepared.part,
            "context": prepared.context,
        }
        self.store.write_ticket(ticket, doc)
        log.info(
            "prompt issued",
            extra={"correlation_id": ticket, "task": prepared.task, "target": prepared.target},
        )
        args = {"ticket": ticket, self.target_field: prepared.target, "task": prepared.task}
        return Envelope(
            status="prompt_ready",
            data={
                "task": prepared.task,
                self.target_field: prepared.target,
                "answerFormat": prepared.answer_format,
                "expiresAt": doc["expires_at"],
                "maxSteps": self.max_steps,
                **prepared.summary,
                **({"prompt_cut": cut} if cut else {}),
                **({"superseded_tickets": superseded} if superseded else {}),
                **({"still_pending": still_pending} if still_pending else {}),
            },
            promptForHostLLM=prompt,
            callbackTool="store_llm_result",
            callbackArgs=args,
            nextAction=(
                "Run promptForHostLLM with your model, then call store_llm_result with callbackArgs "
                f"plus result=<the model's answer as {'a JSON string' if prepared.answer_format == 'json' else 'Markdown'}>."
            ),
        )

    def _supersede(self, prepared: PreparedPrompt) -> tuple[list[str], list[str]]:
        """Close the open tickets of the same target and task that the new prompt replaces: those
        asking any of the same symbols (the context's ``symbols``: a part, a refresh, symbols=),
        or of the same part when a prompt asks no symbols. The tickets closed, and the others of
        the same target and task still open (other parts: their answers are still taken)."""
        done: list[str] = []
        pending: list[str] = []
        new_symbols = prepared.context.get("symbols")
        for doc in self.store.pending(self.namespace):
            if (doc.get("path"), doc.get("task")) != (prepared.target, prepared.task):
                continue
            old_symbols = (doc.get("context") or {}).get("symbols")
            if isinstance(new_symbols, list) and isinstance(old_symbols, list):
                replaced = bool(set(new_symbols) & set(old_symbols))
            else:
                replaced = doc.get("part") == prepared.part
            if replaced and self._close(str(doc["ticket"]), "superseded", "a newer prompt for the same path and task"):
                done.append(str(doc["ticket"]))
            elif not replaced:
                pending.append(str(doc["ticket"]))
        return done, pending

    def _close(self, ticket: str, state: str, reason: str) -> bool:
        file = self.store.ticket_file(ticket)
        with self.store.lock_ticket(file):
            try:
                doc = read_json(file)
            except (OSError, ValueError):
                return False
            if doc.get("state") != "open":
                return False
            doc["state"] = state
            doc["closed_reason"] = reason
            atomic_write_json(file, doc)
        return True

    def cancel(self, ticket: str | None = None, target: str | None = None, task: str | None = None) -> list[str]:
        """Cancel one open ticket, or every open ticket of a target (and task); the tickets cancelled."""
        if ticket is not None:
            self.store.ticket_file(ticket)  # checks its form
            return [ticket] if self._close(ticket, "cancelled", "cancelled by the host") else []
        cancelled = []
        for doc in self.store.pending(self.namespace):
            if target is not None and doc.get("path") != target:
                continue
            if task is not None and doc.get("task") != task:
                continue
            if self._close(str(doc["ticket"]), "cancelled", "cancelled by the host"):
                cancelled.append(str(doc["ticket"]))
        return cancelled

    # -- store_llm_result -------------------------------------------------------------------

    def accept(
        self,
        *,
        ticket: str,
        target: str,
        task: str,
        result: str,
        model: str | None,
        probe: SourceProbe,
        validate: Validator,
        regenerate_hint: str,
    ) -> Envelope:
        """Check the ticket and the answer; on success write the artifact and close the ticket."""
        file = self.store.ticket_file(ticket)
        with self.store.lock_ticket(file):
            try:
                doc: dict[str, Any] = read_json(file)
            except (FileNotFoundError, ValueError):
                raise TicketError(
                    f"ticket {ticket!r} is unknown to this store",
                    code="TICKET_UNKNOWN",
                    details={"ticket": ticket},
                    next_action=f"Call {regenerate_hint} to get a new ticket.",
                ) from None
            retry_args = {"ticket": ticket, self.target_field: doc.get("path"), "task": doc.get("task")}
            if doc.get("namespace") != self.namespace:
                raise TicketError(
                    f"ticket {ticket!r} belongs to another server ({doc.get('namespace')})",
                    code="TICKET_UNKNOWN",
                    details={"ticket": ticket},
                )
            if doc.get("state") == "used":
                raise TicketError(
                    f"ticket {ticket!r} was already used: its result is stored",
                    code="TICKET_UNKNOWN",
                    details={"ticket": ticket, "state": "used"},
                    next_action=(
                        "Its answer is stored: read it with "
                        + self.read_hint.format(key=doc.get("path"), kind=doc.get("kind"))
                        + f", or call {regenerate_hint} for a new ticket."
                    ),
                )
            if doc.get("state") in ("superseded", "cancelled"):
                raise TicketError(
                    f"ticket {ticket!r} was {doc['state']} ({doc.get('closed_reason')}); its answer is not kept",
                    code="TICKET_UNKNOWN",
                    details={"ticket": ticket, "state": doc["state"]},
                    next_action=f"Use the newest ticket, or call {regenerate_hint} for one.",
                )
            if doc.get("state") == "closed":
                raise TicketError(
                    f"ticket {ticket!r} is closed ({doc.get('closed_reason', 'step limit reached')})",
                    code="STEP_LIMIT",
                    details={"ticket": ticket, "steps": doc.get("steps"), "max_steps": doc.get("max_steps")},
                    next_action=f"Call {regenerate_hint} for a new ticket.",
                )
            if float(doc.get("expires_at_ts", 0)) < time.time():
                file.unlink(missing_ok=True)
                raise TicketError(
                    f"ticket {ticket!r} expired at {doc.get('expires_at')}",
                    code="TICKET_EXPIRED",
                    details={"ticket": ticket, "expired_at": doc.get("expires_at")},
                    next_action=f"Call {regenerate_hint} for a new ticket.",
                )
            if target != doc.get("path") or task != doc.get("task"):
                raise InvalidArgument(
                    f"ticket {ticket!r} was issued for {self.target_field}={doc.get('path')!r}, "
                    f"task={doc.get('task')!r}, not {target!r}/{task!r}",
                    details={"field": self.target_field, "rule": "must match the ticket"},
                    next_action="Call store_llm_result with callbackArgs exactly as given.",
                    callback_args=retry_args,
                )
            steps = int(doc.get("steps", 0)) + 1
            doc["steps"] = steps
            stored_fp = doc.get("source")
            current = probe(doc)
            if stored_fp is not None and (current is None or current.sha256 != stored_fp.get("sha256")):
                doc["state"] = "closed"
                doc["closed_reason"] = "the source changed"
                atomic_write_json(file, doc)
                raise SourceChanged(
                    f"{doc['path']!r} changed (or disappeared) since the prompt was made; "
                    "the answer would describe an old version",
                    details={"path": doc["path"], "ticket": ticket, "step": steps},
                    next_action=f"Call {regenerate_hint} again for a prompt on the current source.",
                )
            # Validators may merge with the stored artifact (an annotate in parts): its lock is held
            # from that read until the write, always after the ticket's (one order: no deadlock).
            with self.store.lock(self.store.artifact_file(self.namespace, str(doc["path"]), str(doc["kind"]))):
                return self._finish(file, doc, ticket, steps, result, model, validate, regenerate_hint, retry_args)

    def _finish(
        self,
        file: Any,
        doc: dict[str, Any],
        ticket: str,
        steps: int,
        result: str,
        model: str | None,
        validate: Validator,
        regenerate_hint: str,
        retry_args: dict[str, Any],
    ) -> Envelope:
        """Validate and store the answer; the caller holds the ticket's and the artifact's locks."""
        stored_fp = doc.get("source")
        try:
            if len(result) > self.result_chars:
                raise ResultTooLarge(
                    f"result is {len(result)} characters; at most {self.result_chars} are accepted",
                    details={"field": "result", "limit": self.result_chars, "size": len(result)},
                )
            if not result.strip():
                raise ResultInvalid("result is empty", details={"field": "result", "rule": "non-empty"})
            validated = validate(result, doc)
        except SuiteError as err:
            err.details.setdefault("step", steps)
            err.details["max_steps"] = self.max_steps
            if steps >= self.max_steps:
                doc["state"] = "closed"
                doc["closed_reason"] = f"{steps} invalid answers"
                atomic_write_json(file, doc)
                raise TicketError(
                    f"{err.message} — and that was attempt {steps} of {self.max_steps}: ticket closed",
                    code="STEP_LIMIT",
                    details={"ticket": ticket, "steps": steps, "last_error": err.to_dict()},
                    next_action=f"Call {regenerate_hint} for a new ticket.",
                ) from None
            atomic_write_json(file, doc)
            err.callback_args = retry_args
            err.next_action = (
                f"Fix the answer as error.message says and call store_llm_result again with the same "
                f"ticket ({self.max_steps - steps} attempt(s) left)."
            )
            raise
        provenance = {
            "producer": self.producer,
            "tool": "store_llm_result",
            "task": doc["task"],
            "ticket": ticket,
            "prompt_sha256": doc.get("prompt_sha256"),
            "model": model,
            "prompted_at": doc.get("created_at"),
            "steps": steps,
        }
        record = self.store.put(
            self.namespace,
            str(doc["path"]),
            str(doc["kind"]),
            content=validated.content,
            fmt=validated.fmt,
            provenance=provenance,
            source=Fingerprint.from_dict(stored_fp) if stored_fp else None,
            extra=validated.extra,
        )
        doc["state"] = "used"
        atomic_write_json(file, doc)
        return Envelope(
            status="success",
            data={
                self.target_field: record.key,
                "kind": record.kind,
                "format": validated.fmt,
                "step": steps,
                "updated_at": record.doc["updated_at"],
                **validated.data,
            },
            nextAction="Stored. Read it back with " + self.read_hint.format(key=record.key, kind=record.kind) + ".",
        )
