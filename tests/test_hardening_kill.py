"""SIGKILL a server in the middle of its writes, over and over, and check what it leaves behind.

For each target, every round starts a server process (which first has to answer reads on what
the previous, killed, process left), drives it with writes in a tight loop (one request at a
time, so that "answered" is exact), and SIGKILLs it: on even rounds after a random number of
answered writes, on odd rounds while one more write is in flight (after a random delay within
the time a write takes). After each kill:

- every JSON file of the store (artifacts, tickets, shared documents, undo history) parses;
- every write that was answered is there, and only the in-flight one may be missing
  (llmem: outlines and stored notes; debrief-state: the plot has exactly the features whose
  ``addFeatures`` was answered, plus possibly the one in flight, and the updated feature holds
  the last answered value or the in-flight one; debrief-calc: every stored result an answer
  referred to is there);
- the plot file parses and is a FeatureCollection;
- a fresh process starts and answers (the next round's, and one more at the end).

``HARDENING_KILL_ROUNDS`` (default 10) and ``HARDENING_SEED`` change the run.
"""

from __future__ import annotations

import abc
import json
import os
import random
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests._stdio import RawServer
from tests.conftest import DATA

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is a POSIX signal")

ROUNDS = int(os.environ.get("HARDENING_KILL_ROUNDS", "10"))
SEED = int(os.environ.get("HARDENING_SEED", "20261123"))
MAX_WRITES = 8  # answered writes per round: 0..MAX_WRITES
PLOT = "exercise.plot.json"


def store_json_files(store: Path) -> list[Path]:
    """The store's JSON documents (temporary files of interrupted writes and lock files excluded)."""
    return [p for p in store.rglob("*.json") if p.is_file() and not p.name.startswith(".")]


def assert_store_parses(store: Path) -> int:
    bad = []
    files = store_json_files(store)
    for p in files:
        try:
            json.loads(p.read_bytes())
        except ValueError as exc:
            bad.append(f"{p.relative_to(store)}: {exc}")
    assert not bad, f"half-written store files after SIGKILL: {bad}"
    return len(files)


def ok(result: dict[str, Any]) -> dict[str, Any]:
    assert not result.get("isError"), json.dumps(result)[:800]
    structured: dict[str, Any] = result["structuredContent"]
    return structured


class Target(abc.ABC):
    """One server under test: how to write, what an answered write promises, how to check."""

    script = ""
    ws = Path()

    @abc.abstractmethod
    def setup(self, ws: Path) -> None: ...

    @abc.abstractmethod
    def send(self, server: RawServer, rnd: int, i: int) -> tuple[Any, Any]:
        """Send one write (doing any read it needs first); return (request id, token)."""
        ...

    @abc.abstractmethod
    def confirm(self, answer: dict[str, Any], token: Any) -> None:
        """The write was answered: record what it promises."""
        ...

    @abc.abstractmethod
    def verify(self, ws: Path, in_flight: Any | None) -> None:
        """After a kill: the files hold every confirmed write (``in_flight`` may or may not be there)."""
        ...

    @abc.abstractmethod
    def fresh(self, server: RawServer) -> None:
        """A new process answers reads on what the killed one left."""
        ...

    def adopt(self, ws: Path, in_flight: Any) -> bool:
        """An unanswered write may have landed: take the files' word for it; say whether it did."""
        return False


class LlmemTarget(Target):
    """Outlines of a folder (``generate_artifact``) and stored notes (``store_llm_result``)."""

    script = "llmem-mcp"
    FILES = 10

    def __init__(self) -> None:
        self.markers: dict[str, list[str]] = {}  # file -> function names its outline must list
        self.summary: dict[str, str] = {}  # file -> last answered summary

    def setup(self, ws: Path) -> None:
        self.ws = ws
        (ws / "src").mkdir()
        for k in range(self.FILES):
            (ws / "src" / f"m{k}.py").write_text(f'"""Module {k}."""\n\n\ndef base_{k}() -> int:\n    return {k}\n')

    def send(self, server: RawServer, rnd: int, i: int) -> tuple[Any, Any]:
        k = (rnd * 7 + i) % self.FILES
        rel = f"src/m{k}.py"
        if i % 2 == 0:
            marker = f"f_{rnd}_{i}"
            with (self.ws / rel).open("a", encoding="utf-8") as fh:
                fh.write(f"\n\ndef {marker}() -> str:\n    return {marker!r}\n")
            id_ = server.request("tools/call", {"name": "generate_artifact", "arguments": {"path": "src"}})
            return id_, ("outline", rel, marker)
        prompt = ok(server.call_tool("generate_prompt", {"path": rel, "task": "summarize"}))
        text = f"# Summary {rnd}-{i} of {rel}\n\n" + " ".join(["Text."] * 200)
        args = {**prompt["callbackArgs"], "result": text}
        id_ = server.request("tools/call", {"name": "store_llm_result", "arguments": args})
        return id_, ("summary", rel, text)

    def confirm(self, answer: dict[str, Any], token: Any) -> None:
        ok(answer["result"])
        kind, rel, value = token
        if kind == "outline":
            self.markers.setdefault(rel, []).append(value)
        else:
            self.summary[rel] = value

    def verify(self, ws: Path, in_flight: Any | None) -> None:
        base = ws / ".llmem" / "artifacts" / "llmem"
        for rel, markers in self.markers.items():
            doc = json.loads((base / rel / "outline.json").read_bytes())
            listed = json.dumps(doc["content"])
            missing = [m for m in markers if m not in listed]
            assert not missing, f"answered outline of {rel} lost {missing}"
        for rel, text in self.summary.items():
            doc = json.loads((base / rel / "summarize.json").read_bytes())
            allowed = {text} | ({in_flight[2]} if in_flight and in_flight[:2] == ("summary", rel) else set())
            assert doc["content"] in allowed, f"the summary of {rel} is neither the answered one nor the in-flight one"

    def adopt(self, ws: Path, in_flight: Any) -> bool:
        kind, rel, value = in_flight
        path = ws / ".llmem" / "artifacts" / "llmem" / rel / f"{'outline' if kind == 'outline' else 'summarize'}.json"
        if not path.exists():  # killed before the first write of this artifact landed: nothing to adopt
            return False
        doc = json.loads(path.read_bytes())
        if kind == "outline":
            landed = value in json.dumps(doc["content"])
            if landed:
                self.markers.setdefault(rel, []).append(value)
        else:
            landed = doc["content"] == value
            if landed:
                self.summary[rel] = value
        return landed

    def fresh(self, server: RawServer) -> None:
        listed = ok(server.call_tool("list_artifacts", {"directory": "src", "limit": 500}))
        assert listed["status"] == "success"
        for rel in self.summary:  # the exact text is checked on the file in verify()
            got = ok(server.call_tool("get_artifact", {"path": rel, "kind": "summarize"}))
            assert got["data"]["content"].startswith("# Summary")
        for rel in self.markers:
            ok(server.call_tool("get_artifact", {"path": rel}))


class StateTarget(Target):
    """``debrief_apply_command`` addFeatures / updateFeatures on a copy of the 577 KB sample plot."""

    script = "debrief-state-mcp"
    UPDATED = "p-2"

    def __init__(self) -> None:
        self.added: list[str] = []
        self.value: Any = None  # last answered kill_counter of UPDATED
        self.initial: list[str] = []
        self.template: dict[str, Any] = {}

    def setup(self, ws: Path) -> None:
        shutil.copy(DATA / "plots" / "large-sample.plot.json", ws / PLOT)
        data = json.loads((ws / PLOT).read_bytes())
        self.initial = [str(f["id"]) for f in data["features"]]
        self.template = next(f for f in data["features"] if f.get("id") == self.UPDATED)

    def send(self, server: RawServer, rnd: int, i: int) -> tuple[Any, Any]:
        if i % 3 == 2:
            value = f"{rnd}-{i}"
            feature = json.loads(json.dumps(self.template))
            feature["properties"]["kill_counter"] = value
            command = {"command": "updateFeatures", "payload": [feature]}
            token: Any = ("update", value)
        else:
            fid = f"k-{rnd}-{i}"
            feature = {
                "type": "Feature",
                "id": fid,
                "geometry": {"type": "Point", "coordinates": [-5.0 + i / 100, 36.0 + rnd / 100]},
                "properties": {"kind": "reference-point", "name": fid},
            }
            command = {"command": "addFeatures", "payload": [feature]}
            token = ("add", fid)
        id_ = server.request(
            "tools/call", {"name": "debrief_apply_command", "arguments": {"filename": PLOT, "command": command}}
        )
        return id_, token

    def confirm(self, answer: dict[str, Any], token: Any) -> None:
        result = ok(answer["result"])
        if token[0] == "add":
            assert result["added_ids"] == [token[1]]
            self.added.append(token[1])
        else:
            assert result["updated_ids"] == [self.UPDATED]
            self.value = token[1]

    def verify(self, ws: Path, in_flight: Any | None) -> None:
        data = json.loads((ws / PLOT).read_bytes())
        assert data["type"] == "FeatureCollection" and isinstance(data["features"], list)
        ids = [str(f.get("id")) for f in data["features"]]
        assert len(ids) == len(set(ids)), "duplicate feature ids after SIGKILL"
        expected = set(self.initial) | set(self.added)
        extra = set(ids) - expected
        assert set(ids) >= expected, f"answered addFeatures lost: {sorted(expected - set(ids))}"
        allowed_extra = {in_flight[1]} if in_flight and in_flight[0] == "add" else set()
        assert extra <= allowed_extra, f"features nobody was told about: {sorted(extra - allowed_extra)}"
        current = next(f for f in data["features"] if f.get("id") == self.UPDATED)["properties"].get("kill_counter")
        allowed = {self.value} | ({in_flight[1]} if in_flight and in_flight[0] == "update" else set())
        assert current in allowed, f"{self.UPDATED} holds {current!r}, not one of {allowed}"

    def adopt(self, ws: Path, in_flight: Any) -> bool:
        data = json.loads((ws / PLOT).read_bytes())
        if in_flight[0] == "add":
            landed = any(f.get("id") == in_flight[1] for f in data["features"])
            if landed:
                self.added.append(in_flight[1])
        else:
            current = next(f for f in data["features"] if f.get("id") == self.UPDATED)["properties"]
            landed = current.get("kill_counter") == in_flight[1]
            if landed:
                self.value = in_flight[1]
        return landed

    def fresh(self, server: RawServer) -> None:
        got = ok(server.call_tool("debrief_get_features", {"filename": PLOT, "ids": self.added[-5:] or ["f-1"]}))
        assert got["count"] == len(self.added[-5:] or ["f-1"])
        assert ok(server.call_tool("debrief_list_plots", {}))["success"] is True


class CalcTarget(Target):
    """``run_tool import-rep``, whose results and over-cap payloads go to the store."""

    script = "debrief-calc-mcp"

    def __init__(self) -> None:
        self.refs: list[str] = []
        self.unanswered_runs: set[str] = set()

    def setup(self, ws: Path) -> None:
        shutil.copy(DATA / "rep" / "valid_boat1.rep", ws / "boat1.rep")
        shutil.copy(DATA / "rep" / "valid_boat2.rep", ws / "boat2.rep")
        shutil.copy(DATA / "rep" / "valid_narrative.rep", ws / "narrative.rep")

    def send(self, server: RawServer, rnd: int, i: int) -> tuple[Any, Any]:
        path = ("boat1.rep", "boat2.rep", "narrative.rep")[(rnd + i) % 3]
        arguments = {"tool": "import-rep", "parameters": {"path": path}}
        return server.request("tools/call", {"name": "run_tool", "arguments": arguments}), path

    def confirm(self, answer: dict[str, Any], token: Any) -> None:
        result = ok(answer["result"])
        assert result["success"] is True
        found = _refs(result)
        assert found or result.get("features"), "an import that stored nothing"
        self.refs += found

    def verify(self, ws: Path, in_flight: Any | None) -> None:
        from debrief_calc.plots.plotstate import parse_ref

        stored = ws / ".llmem" / "artifacts" / "debrief-calc"
        for ref in self.refs:
            parsed = parse_ref(ref)  # every reference an answer gave names a whole stored file
            doc = json.loads((stored / parsed.key / f"{parsed.kind}.json").read_bytes())
            assert doc["content"], f"the stored content of {ref} is empty"

    def adopt(self, ws: Path, in_flight: Any) -> bool:
        runs = ws / ".llmem" / "artifacts" / "debrief-calc" / "runs"
        answered = {ref.removeprefix("debrief-calc:runs/").split("/")[0] for ref in self.refs}
        others = {d.name for d in runs.iterdir()} - answered if runs.is_dir() else set()
        new = others - self.unanswered_runs  # stored (whole files, checked above) but never answered
        self.unanswered_runs |= new
        return bool(new)

    def fresh(self, server: RawServer) -> None:
        assert ok(server.call_tool("list_tools", {}))["tools"]
        track = json.loads((DATA / "calc-track-single.geojson").read_text(encoding="utf-8"))
        assert ok(server.call_tool("run_tool", {"tool": "track-stats", "features": [track]}))["success"] is True


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        ref = value.get("ref")
        own = [ref] if isinstance(ref, str) and ref.startswith("debrief-calc:") else []
        return own + [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def run_kill_rounds(target: Target, ws: Path, logs: Path) -> dict[str, Any]:
    rng = random.Random(f"{SEED}:{target.script}")
    target.setup(ws)
    stats: dict[str, Any] = {"answered": 0, "in_flight_answered": 0, "in_flight_on_disk": 0, "in_flight_lost": 0}
    durations: list[float] = []
    for rnd in range(ROUNDS):
        with RawServer(target.script, ws, logs / f"{target.script}-{rnd}.log") as server:
            server.initialize()
            target.fresh(server)  # what the previous, killed, process left is readable
            for i in range(rng.randint(0 if rnd % 2 else 1, MAX_WRITES)):
                started = time.monotonic()
                id_, token = target.send(server, rnd, i)
                server.wait_for([id_], 60)
                durations.append(time.monotonic() - started)
                target.confirm(server.answer(id_), token)
                stats["answered"] += 1
            in_flight = None
            if rnd % 2:
                id_, in_flight = target.send(server, rnd, MAX_WRITES + 1)
                typical = statistics.median(durations) if durations else 0.02
                time.sleep(rng.uniform(0, 1.5 * typical))
            server.kill()
            if in_flight is not None and server.answered(id_):  # answered before the signal
                stats["in_flight_answered"] += 1
                target.confirm(server.answer(id_), in_flight)
                in_flight = None
        stats["store_files"] = assert_store_parses(ws / ".llmem")
        target.verify(ws, in_flight)
        if in_flight is not None:
            stats["in_flight_on_disk" if target.adopt(ws, in_flight) else "in_flight_lost"] += 1
    with RawServer(target.script, ws, logs / f"{target.script}-final.log") as server:
        server.initialize()
        target.fresh(server)
        assert server.close() == 0
    # Temporary files of writes the kills interrupted: never read (hidden names), but never swept either.
    stats["tmp_left_in_store"] = len(list((ws / ".llmem").rglob("*.tmp")))
    stats["tmp_left_in_workspace"] = len([p for p in ws.rglob("*.tmp") if ".llmem" not in p.relative_to(ws).parts])
    return stats


@pytest.mark.parametrize("target_class", [LlmemTarget, StateTarget, CalcTarget], ids=lambda c: c.script)
def test_sigkill_mid_write_leaves_whole_files(target_class: type[Target], workspace: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    stats = run_kill_rounds(target_class(), workspace, logs)
    print(f"{target_class.script}: {ROUNDS} kills, {stats}")
    assert stats["answered"] >= ROUNDS
