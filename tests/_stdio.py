"""A raw JSON-RPC-over-stdio driver for the hardening tests (fuzz, SIGKILL, soak).

It talks to a console script exactly as a client does, but byte for byte: lines are written
as given (so malformed ones can be sent), answers are collected by a reader thread keyed by
their id, and every wait is bounded. stderr goes to a file so a chatty server can never block
on a full pipe.
"""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.conftest import console_script, subprocess_env

__all__ = ["INIT", "RawServer", "id_key", "rpc_line"]

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "hardening", "version": "0"}}


def id_key(id_: Any) -> tuple[str, Any]:
    """A dict key for a JSON-RPC id that keeps 1, "1" and true apart (and takes odd ids too)."""
    if isinstance(id_, (str, int, float)) or id_ is None:
        return (type(id_).__name__, id_)
    return (type(id_).__name__, json.dumps(id_, sort_keys=True))


def rpc_line(id_: Any, method: str, params: Any = None, *, notification: bool = False) -> str:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if not notification:
        msg["id"] = id_
    if params is not None:
        msg["params"] = params
    return json.dumps(msg, ensure_ascii=False)


#: For tests that hammer a server on purpose (soak, fuzz): thousands of calls a second, far past
#: the rate limit a model meets, which has tests of its own (tests/test_ratelimit.py).
UNLIMITED_RATES = {
    "LLMEM_WRITES_PER_MINUTE": "100000000",
    "LLMEM_WRITE_BURST": "1000000",
    "LLMEM_READS_PER_MINUTE": "100000000",
    "LLMEM_READ_BURST": "1000000",
}


class RawServer:
    """One server process over stdio, answers collected by id in a background reader thread."""

    def __init__(
        self,
        script: str,
        workspace: Path,
        stderr_path: Path,
        *args: str,
        keep_raw: bool = True,
        env: dict[str, str] | None = None,
    ):
        self.keep_raw = keep_raw  # a soak drops the raw lines (and pops its answers) to stay small
        self.stderr_path = stderr_path
        self._stderr = stderr_path.open("wb")
        self.proc = subprocess.Popen(
            [console_script(script), "--workspace", str(workspace), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=subprocess_env(**(env or {})),
        )
        self.pid = self.proc.pid
        self._cond = threading.Condition()
        self.answers: dict[tuple[str, Any], list[dict[str, Any]]] = defaultdict(list)
        self.others: list[Any] = []  # notifications, server requests, answers with a null id
        self.bad_lines: list[bytes] = []  # stdout lines that are not JSON-RPC messages
        self.raw_lines: list[bytes] = []
        self.eof = False
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, name=f"reader-{script}", daemon=True)
        self._reader.start()

    # -- reading ------------------------------------------------------------------------------

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                msg = None
            with self._cond:
                if self.keep_raw:
                    self.raw_lines.append(raw)
                if not isinstance(msg, dict) or msg.get("jsonrpc") != "2.0":
                    self.bad_lines.append(raw)
                elif "method" not in msg and ("result" in msg or "error" in msg) and msg.get("id") is not None:
                    self.answers[id_key(msg["id"])].append(msg)
                else:
                    self.others.append(msg)
                self._cond.notify_all()
        with self._cond:
            self.eof = True
            self._cond.notify_all()

    def answered(self, id_: Any) -> bool:
        with self._cond:
            return id_key(id_) in self.answers

    def answer(self, id_: Any) -> dict[str, Any]:
        with self._cond:
            found = self.answers.get(id_key(id_))
            assert found, f"no answer for id {id_!r}"
            return found[0]

    def pop_answer(self, id_: Any) -> dict[str, Any]:
        """The answer for ``id_``, forgotten by the driver (so a long run does not hoard them)."""
        with self._cond:
            found = self.answers.pop(id_key(id_), None)
            assert found, f"no answer for id {id_!r}"
            return found[0]

    def missing(self, ids: list[Any]) -> list[Any]:
        with self._cond:
            return [i for i in ids if id_key(i) not in self.answers]

    def wait_for(self, ids: list[Any], timeout: float) -> None:
        """Block until every id has an answer; fail with the missing ids (and the log's tail) if not."""
        deadline = time.monotonic() + timeout
        keys = [id_key(i) for i in ids]
        with self._cond:
            while True:
                missing = [k for k in keys if k not in self.answers]
                if not missing:
                    return
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    break
                self._cond.wait(min(left, 1.0))
        raise AssertionError(
            f"{len(missing)} request(s) unanswered after {timeout} s (eof={self.eof}, "
            f"exit={self.proc.poll()}): {[k[1] for k in missing[:10]]}\n--- server log tail ---\n" + self.stderr_tail()
        )

    def wait_outstanding(self, ids: list[Any], at_most: int, timeout: float) -> None:
        """Block until at most ``at_most`` of ``ids`` are still unanswered (pipelining window)."""
        deadline = time.monotonic() + timeout
        keys = [id_key(i) for i in ids]
        with self._cond:
            while sum(k not in self.answers for k in keys) > at_most:
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    raise AssertionError(
                        f"the server fell behind (eof={self.eof}, exit={self.proc.poll()})\n" + self.stderr_tail()
                    )
                self._cond.wait(min(left, 1.0))

    def wait_answers(self, count: int, timeout: float) -> None:
        """Block until at least ``count`` answers (by id) have arrived."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.answers) < count:
                left = deadline - time.monotonic()
                if left <= 0 or self.eof:
                    raise AssertionError(f"only {len(self.answers)} of {count} answers\n" + self.stderr_tail())
                self._cond.wait(min(left, 1.0))

    # -- writing ------------------------------------------------------------------------------

    def next_id(self) -> int:
        return next(self._ids)

    def send_raw(self, data: bytes | str) -> None:
        assert self.proc.stdin is not None
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogatepass")
        with self._write_lock:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()

    def send_lines(self, lines: list[str] | list[bytes]) -> None:
        chunk = [ln.encode("utf-8", "surrogatepass") if isinstance(ln, str) else ln for ln in lines]
        self.send_raw(b"".join(c + b"\n" for c in chunk))

    def request(self, method: str, params: Any = None, id_: Any = None) -> Any:
        id_ = self.next_id() if id_ is None else id_
        self.send_lines([rpc_line(id_, method, params)])
        return id_

    def notify(self, method: str, params: Any = None) -> None:
        self.send_lines([rpc_line(None, method, params, notification=True)])

    def call_tool(self, name: str, arguments: dict[str, Any], timeout: float = 60) -> dict[str, Any]:
        """``tools/call`` and wait: the MCP result (with ``isError``), or fail on a JSON-RPC error."""
        id_ = self.request("tools/call", {"name": name, "arguments": arguments})
        self.wait_for([id_], timeout)
        ans = self.answer(id_)
        assert "result" in ans, ans
        result: dict[str, Any] = ans["result"]
        return result

    def initialize(self, timeout: float = 60) -> dict[str, Any]:
        id_ = self.request("initialize", INIT)
        self.wait_for([id_], timeout)
        self.notify("notifications/initialized")
        result: dict[str, Any] = self.answer(id_)["result"]
        return result

    # -- lifecycle ----------------------------------------------------------------------------

    def close(self, timeout: float = 30) -> int:
        """Close stdin (a client going away) and wait for a clean exit."""
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.close()
        except BrokenPipeError:
            pass
        try:
            code = self.proc.wait(timeout=timeout)
        finally:
            self._finish()
        self._reader.join(timeout=10)
        return code

    def kill(self) -> None:
        """SIGKILL: no cleanup, no flush, exactly what a crash or an OOM killer does."""
        if self.proc.poll() is None:
            os.kill(self.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)
        self._finish()
        self._reader.join(timeout=10)

    def _finish(self) -> None:
        if self.proc.poll() is None:  # pragma: no cover - only when a wait above timed out
            self.proc.kill()
            self.proc.wait(timeout=30)
        if self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        self._stderr.close()

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=30)
        finally:
            self._finish()

    # -- inspection ---------------------------------------------------------------------------

    def rss_kb(self) -> int:
        """The process's resident set size (``VmRSS`` of ``/proc/<pid>/status``), in kB."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise AssertionError("no VmRSS line")  # pragma: no cover

    def stderr_tail(self, chars: int = 4000) -> str:
        try:
            self._stderr.flush()
        except ValueError:
            pass
        try:
            return self.stderr_path.read_text(encoding="utf-8", errors="replace")[-chars:]
        except OSError:  # pragma: no cover
            return ""

    def stderr_text(self) -> str:
        return self.stderr_path.read_text(encoding="utf-8", errors="replace")


def exchange(
    script: str, workspace: Path, lines: list[str], wanted: set[Any], timeout: float = 60
) -> tuple[dict[Any, dict[str, Any]], str]:
    """Send ``lines`` to a fresh server as a client would and collect the answers to ``wanted``.

    stdin stays open until every wanted id is answered (a real client waits for its answers;
    EOF ends the server and cancels what is in flight), then closes. Asserts what stdio owes a
    client: every stdout line is JSON-RPC, nothing follows the last answer, and the server exits
    0 on EOF. Returns the answers by id and the server's stderr.
    """
    import concurrent.futures
    import subprocess

    from tests.conftest import console_script, subprocess_env

    proc = subprocess.Popen(
        [console_script(script), "--workspace", str(workspace)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=subprocess_env(),
    )
    assert proc.stdin and proc.stdout and proc.stderr
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    out: list[dict[str, Any]] = []
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        while not wanted <= {m.get("id") for m in out}:
            line = pool.submit(proc.stdout.readline).result(timeout=timeout)
            assert line, "the server closed stdout early: " + proc.stderr.read()
            out.append(json.loads(line))  # every stdout line is JSON
        proc.stdin.close()
        rest = pool.submit(proc.stdout.read).result(timeout=timeout)
    assert proc.wait(timeout=30) == 0, "no clean exit on stdin EOF"
    assert rest.strip() == ""
    assert all(m.get("jsonrpc") == "2.0" for m in out)
    return {m["id"]: m for m in out if "id" in m}, proc.stderr.read()
