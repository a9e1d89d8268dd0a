"""Fuzz each console script over real stdio with thousands of random and malformed messages.

After a real ``initialize`` handshake, each server gets a reproducible stream (seeded RNG) of
non-JSON lines, truncated JSON, JSON that is not an object, wrong ``jsonrpc`` versions, odd ids,
batches, notifications, unknown methods and tools, and ``tools/call`` of every real tool with
random arguments (wrong types, missing fields, huge strings, deep nesting, NUL bytes, raw
invalid UTF-8, hostile paths). Messages are pipelined in chunks with a bounded window of
requests in flight; a reader thread collects the answers.

What must hold: every well-formed request (``jsonrpc: "2.0"``, a string or integer id, a
method, object params) gets exactly one answer carrying its id; malformed messages get at most
one and never an answer under someone else's id; stdout carries only JSON-RPC lines; no answer
contains a Python traceback, an ``INTERNAL`` error, a byte of the secret file next door, or
(for tool results) text over the answer cap; the server still answers ``tools/list`` and a real
tool call at the end and exits cleanly on stdin EOF; and nothing in the workspace changed
outside the store ``.llmem/`` (the plot files of debrief-state byte for byte, since every
plot-changing call of the fuzz carries a defect it must be refused for).

Malformed lines the SDK drops without an answer (JSON-RPC would answer them with an error of
id ``null``) are not required to be answered here.

Bugs the fuzz found, each fixed and pinned by its own test below: a request nested deeper than
the SDK parser's limit went unanswered (``test_deeply_nested_request_is_answered``); error
answers were not held to the cap (``test_error_answers_stay_under_the_cap``); paths with a
segment over NAME_MAX or hundreds of segments deep gave ``INTERNAL``
(``test_extreme_paths_are_refused_not_internal``); a refused write to a missing plot left a
lock file and folders (``test_refused_plot_write_leaves_the_workspace_alone``); prompt errors
answered code 0 (``test_prompt_errors_are_invalid_params``); a refused delete left folders in
the store (``test_refused_delete_leaves_the_store_alone``).

Reproduce a run with ``HARDENING_SEED=<n>``; ``HARDENING_FUZZ_MESSAGES`` sets the count.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests._stdio import INIT, UNLIMITED_RATES, RawServer, id_key
from tests.conftest import DATA

SEED = int(os.environ.get("HARDENING_SEED", "20261123"))
MESSAGES = int(os.environ.get("HARDENING_FUZZ_MESSAGES", "3000"))
WINDOW = 48  # well-formed requests in flight at most
CHUNK = 24  # lines per write
ANSWER_CAP = 20_000  # LLMEM_MAX_ANSWER_CHARS default: no tool answer text beyond it
SECRET = "TOPSECRET-7f3a9c-MARKER"
TRACEBACK = re.compile(r'Traceback \(most recent call last\)|File \\?"[^"\\]+\.py\\?", line \d+')
ERROR_CODE = re.compile(r"^[A-Z][A-Z0-9_]*$")
RAW_BYTES = "@@RAW-INVALID-UTF8@@"  # replaced by bytes that are not UTF-8 after encoding
MANY_LONG_IDS = [f"{'id-' * 130}{i}" for i in range(120)]  # 120 unknown ids of ~400 characters

LARGE = "large-sample.plot.json"
SAMPLE = "sample.plot.json"

# -- workspaces ------------------------------------------------------------------------------


def _secret_sibling(ws: Path) -> Path:
    """A folder next to the workspace whose name starts with the workspace's (``/ws`` vs ``/ws_secret``)."""
    secret = ws.parent / (ws.name + "_secret")
    secret.mkdir()
    (secret / "secret.py").write_text(f'KEY = "{SECRET}"\n\n\ndef leak():\n    return KEY\n', encoding="utf-8")
    (secret / "secret.rep").write_text(f";NARRATIVE: 951212 050000.000 NELSON {SECRET}\n", encoding="utf-8")
    plot = json.loads((DATA / "plots" / SAMPLE).read_text(encoding="utf-8"))
    plot.setdefault("properties", {})["name"] = SECRET
    (secret / "outside.plot.json").write_text(json.dumps(plot), encoding="utf-8")
    return secret


def make_workspace(script: str, ws: Path) -> Path:
    secret = _secret_sibling(ws)
    (ws / "escape").symlink_to(secret, target_is_directory=True)
    if script == "llmem-mcp":
        (ws / "src").mkdir()
        (ws / "src" / "app.py").write_text(
            '"""App."""\n\nclass Greeter:\n    def hello(self, name: str) -> str:\n        return name\n\n\n'
            "def main() -> int:\n    return 0\n",
            encoding="utf-8",
        )
        (ws / "src" / "util.ts").write_text("export function add(a: number, b: number): number { return a + b; }\n")
        (ws / "sub dir ü").mkdir()
        (ws / "sub dir ü" / "naïve.py").write_text("def f():\n    return 1\n", encoding="utf-8")
        (ws / "README.md").write_text("# Fuzz target\n", encoding="utf-8")
        (ws / "link.py").symlink_to(secret / "secret.py")
    else:
        shutil.copy(DATA / "plots" / LARGE, ws / LARGE)
        shutil.copy(DATA / "plots" / SAMPLE, ws / SAMPLE)
        shutil.copy(DATA / "plots" / SAMPLE, ws / "mission1.plot.json")
        shutil.copy(DATA / "rep" / "valid_boat1.rep", ws / "boat1.rep")
        shutil.copy(DATA / "calc-track-single.geojson", ws / "track.geojson")
        (ws / "evil.plot.json").symlink_to(secret / "outside.plot.json")
        (ws / "evil.rep").symlink_to(secret / "secret.rep")
    return secret


def snapshot(root: Path, *skip: Path) -> dict[str, bytes | str]:
    """Every file's bytes (and every symlink's target) under ``root``, the ``skip`` folders excluded."""
    out: dict[str, bytes | str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here in skip:
            dirnames[:] = []
            continue
        for name in dirnames + filenames:
            p = here / name
            if p in skip:
                continue
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = "symlink -> " + os.readlink(p)
            elif p.is_file():
                out[rel] = p.read_bytes()
            else:
                out[rel] = "dir"
    return out


def workspace_changes(before: dict[str, bytes | str], after: dict[str, bytes | str]) -> list[str]:
    """What differs outside the store. Nothing may: plots' lock and temporary files live in the
    store, and a refused write to a plot that does not exist leaves no folder behind."""
    return sorted(rel for rel in set(before) | set(after) if before.get(rel) != after.get(rel))


# -- what the fuzz sends -----------------------------------------------------------------------


def hostile_strings(ws: Path, secret: Path) -> list[str]:
    return [
        "../../etc/passwd",
        "/etc/passwd",
        "C:\\x",
        "C:/Windows/win.ini",
        "c:x",
        "\\\\srv\\s",
        "//srv/s",
        "\\\\?\\C:\\x",
        "..\\..\\windows\\system32",
        "a\x00b",
        "\x00",
        "src/app.py\x00.txt",
        "..",
        "../",
        "./../..",
        "src/../../x",
        "~",
        "~/.ssh/id_rsa",
        "%2e%2e%2f%2e%2e%2fetc%2fpasswd",
        "file:///etc/passwd",
        "\u202egnp.exe",
        "CON",
        "NUL:",
        "con.plot.json",
        " ",
        "",
        "\n",
        "\t\r",
        "src//app.py",
        ".llmem",
        ".llmem/artifacts/llmem",
        ".git/config",
        "/",
        "x" * 300,
        "a/" * 2000,
        "😀/🙈.py",
        "ü/ß.plot.json",
        "'; DROP TABLE x; --",
        "${HOME}",
        f"$(touch {ws.parent}/pwned)",
        "*",
        "?",
        "[",
        "escape/secret.py",
        "escape",
        "escape/outside.plot.json",
        "link.py",
        "evil.plot.json",
        "evil.rep",
        f"../{secret.name}/secret.py",
        f"../{secret.name}/outside.plot.json",
        str(secret / "secret.py"),
        str(secret / "outside.plot.json"),
        str(secret),
        "/proc/self/environ",
        "/dev/zero",
        "/dev/stdin",
    ]


def random_text(rng: random.Random) -> str:
    alphabet = "abcXYZ019 _-./\\:;'\"{}[]<>|?*~`!@#$%^&()\n\t\x00\x01\x7fü€😀\u202e\u200b\ufeff"
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))


def deep(rng: random.Random, depth: int, leaf: Any = "x") -> Any:
    value: Any = leaf
    for _ in range(depth):
        value = [value] if rng.random() < 0.5 else {"k": value}
    return value


@dataclass
class Fuzzer:
    rng: random.Random
    hostile: list[str]
    plausible: dict[str, list[Any]]

    def string(self) -> str:
        r = self.rng.random()
        if r < 0.45:
            return self.rng.choice(self.hostile)
        if r < 0.8:
            return random_text(self.rng)
        if r < 0.97:
            return self.rng.choice("aZ/.\x00ü") * self.rng.randint(1_000, 40_000)
        return "H" * self.rng.randint(100_000, 400_000)

    def value(self, depth: int = 0) -> Any:
        rng = self.rng
        r = rng.random()
        if r < 0.08:
            return None
        if r < 0.14:
            return rng.choice([True, False])
        if r < 0.24:
            return rng.choice([0, -1, 1, 7, 2**31, -(2**63), 2**64 + 1, 10**40, -(10**30)])
        if r < 0.30:
            return rng.choice([0.5, -0.0, 1e308, -1e308, 1e-320, 3.14159, float("nan"), float("inf"), -float("inf")])
        if r < 0.62:
            return self.string()
        if r < 0.74 and depth < 4:
            return [self.value(depth + 1) for _ in range(rng.randint(0, 5))]
        if r < 0.86 and depth < 4:
            keys = [random_text(rng), "path", "id", "type", "command", "payload", "filename", "ref", "__proto__"]
            return {rng.choice(keys): self.value(depth + 1) for _ in range(rng.randint(0, 5))}
        if r < 0.93 and depth == 0:
            return deep(rng, rng.randint(10, 260), self.string())  # on both sides of the SDK parser's limit
        return rng.choice([[], {}, "", [[]], {"": ""}, [None], {"type": "FeatureCollection", "features": None}])

    def arguments(self, schema: dict[str, Any]) -> dict[str, Any]:
        rng = self.rng
        args: dict[str, Any] = {}
        for name in schema.get("properties", {}):
            r = rng.random()
            if r < 0.5 and self.plausible.get(name):
                args[name] = rng.choice(self.plausible[name])
            elif r < 0.85:
                args[name] = self.value()
        for _ in range(rng.choice([0, 0, 0, 1, 3])):
            args[rng.choice(["extra", "__class__", "", "x" * 50, "path ", "ö"])] = self.value()
        return args


# Plot-changing debrief-state calls: each gets one defect it must be refused for, so that the
# plot files must come out of the fuzz byte for byte.
STATE_PLOT_WRITERS = {
    "debrief_set_time",
    "debrief_set_viewport",
    "debrief_zoom_to_selection",
    "debrief_apply_command",
    "debrief_undo",
    "store_llm_result",
    "debrief_create_plot",
    "debrief_set_properties",
}


def state_defect(rng: random.Random, name: str, args: dict[str, Any], bad_plots: list[str]) -> None:
    choices = ["filename"]
    if name in {
        "debrief_set_time",
        "debrief_set_viewport",
        "debrief_zoom_to_selection",
        "debrief_apply_command",
        "debrief_set_properties",
    }:
        choices.append("revision")
    if name == "debrief_apply_command":
        choices += ["command"] * 3
    if name == "debrief_set_time":
        choices += ["time"] * 2
    if name == "debrief_set_viewport":
        choices += ["viewport"] * 2
    if name == "store_llm_result":
        args["ticket"] = rng.choice(["", "nope", "t" * 65, "../x", "0123456789abcdef", "a\x00b", "ticket-" * 3])
        args["add_annotation"] = True
        return
    if name == "debrief_create_plot":  # an existing file, a name that is no new plot, or bad features
        args["filename"] = rng.choice(
            [LARGE, SAMPLE, "mission1.plot.json", *[b for b in bad_plots if b != "missing.plot.json"]]
        )
        if rng.random() < 0.5:
            args["filename"] = "fresh.plot.json"
            args["features"] = rng.choice(
                [
                    [{"type": "Point"}],
                    "features",
                    [{"ref": "debrief-calc:runs/nope"}],
                    [{"type": "Feature", "id": 1, "geometry": 5}],
                ]
            )
        return
    if name == "debrief_set_properties":
        choices += ["ids", "properties"]
    defect = rng.choice(choices)
    if defect == "filename":
        args["filename"] = rng.choice(bad_plots)
    elif defect == "revision":
        args["filename"] = rng.choice([LARGE, SAMPLE, "mission1.plot.json"])
        args["expected_revision"] = rng.choice(["0", "deadbeef", "r" * 64, "sha256:" + "0" * 40, " "])
    elif defect == "command":
        args["command"] = rng.choice(
            [
                {"command": "explode", "payload": 1},
                {"command": 7},
                {"payload": []},
                {"command": "addFeatures", "payload": "not a list"},
                {"command": "addFeatures", "payload": [{"type": "Feature", "geometry": "x" * 50}]},
                {"command": "updateFeatures", "payload": [{"type": "Feature", "id": "no-such-id", "properties": {}}]},
                {"command": "setFeatureCollection", "payload": 5},
                {"command": "setViewport", "payload": {"bounds": ["w", "s", "e", "n"]}},
                {"command": "setTimeState", "payload": {"current": "yesterday", "start": "x", "end": "y"}},
                {"ref": "debrief-calc:runs/../../../etc/passwd"},
                {"ref": "nope"},
                {"ref": "debrief-calc:runs/does-not-exist"},
                "addFeatures",
                42,
                deep(rng, 12, {"command": "logMessage", "payload": "deep"}),
                {"command": "composite", "payload": [{"command": "explode"}]},
            ]
        )
    elif defect == "ids":
        args.update(filename=LARGE, ids=rng.choice([["no-such-id"], [], ["z-4", "nope"]]), properties={"name": "x"})
    elif defect == "properties":
        args.update(filename=LARGE, ids=["z-4"], properties=rng.choice([{}, "grey", [1], 5]))
    elif defect == "time":
        args["timeState"] = rng.choice(
            [
                {"current": "2024-11-15T10:00:00Z", "start": "2024-11-16T00:00:00Z", "end": "2024-11-14T00:00:00Z"},
                {"current": "not a time", "start": "2024-11-14T00:00:00Z", "end": "2024-11-15T00:00:00Z"},
                {"current": "2030-01-01T00:00:00Z", "start": "2024-11-14T00:00:00Z", "end": "2024-11-15T00:00:00Z"},
                {"current": "1999-01-01T00:00:00Z"},
                {},
                "now",
            ]
        )
    else:
        args["viewportState"] = rng.choice(
            [
                {"bounds": [1, 2, 3]},
                {"bounds": ["w", "s", "e", "n"]},
                {"bounds": [0, 95, 1, 100]},
                {"bounds": [-200, 0, 200, 1]},
                {"bounds": [1, 2, 3, 4, 5]},
                {},
            ]
        )


def plausible_values(script: str, ws: Path, secret: Path) -> dict[str, list[Any]]:
    if script == "llmem-mcp":
        paths = [".", "src", "src/app.py", "src/util.ts", "sub dir ü/naïve.py", "README.md", "nope.py", str(ws)]
        return {
            "path": paths,
            "directory": paths,
            "task": ["parse", "annotate", "summarize", "document", "test-plan", "PARSE", "hack"],
            "kind": ["outline", "summarize", "annotate", "../outline", "", "x" * 200],
            "status": ["fresh", "stale", "orphaned", "pending", "rotten"],
            "limit": [1, 50, 500, 0, -1, 501, 10**12],
            "offset": [0, 1, 10**9, -5],
            "cursor": ["", "abc", "eyJ9", "../../", "x" * 3000],
            "ticket": ["", "abc", "../../pending/x", "t" * 65],
            "result": ["# Summary", '{"symbols": {}}', "{", "R" * 300_000],
            "model": ["gpt", "", None],
        }
    feats = json.loads((DATA / "calc-tracks-pair.geojson").read_text(encoding="utf-8"))
    track = json.loads((DATA / "calc-track-single.geojson").read_text(encoding="utf-8"))
    plots = [LARGE, SAMPLE, "mission1.plot.json", "missing.plot.json", "evil.plot.json", "track.geojson"]
    if script == "debrief-calc-mcp":
        return {
            "tool": [
                "track-stats",
                "range-bearing",
                "tote",
                "closest-approach",
                "zone-transits",
                "speed-filter",
                "area-summary",
                "resample-track",
                "delete-features",
                "import-rep",
                "TRACK-STATS",
                "nope",
            ],
            "name": ["track-stats", "import-rep", "nope", ""],
            "features": [[track], feats.get("features", []), [{}], [{"type": "Feature"}], [track] * 3],
            "plot": [
                {"filename": LARGE, "feature_ids": ["f-1"]},
                {"filename": LARGE, "feature_ids": ["f-1", "f-2"]},
                {"filename": LARGE, "selection": True},
                {"filename": "evil.plot.json", "feature_ids": ["f-1"]},
                {"filename": "../../etc/passwd", "feature_ids": [1]},
                {"filename": LARGE, "feature_ids": ["no-such"]},
                {"filename": LARGE, "feature_ids": MANY_LONG_IDS},
            ],
            "bounds": [[-6.5, 35.5, -3.0, 36.5], [0, 0, 0, 0], [200, 100, -200, -100], [1, 2, 3]],
            "parameters": [
                {"path": "boat1.rep"},
                {"path": "evil.rep"},
                {"path": "../../etc/passwd"},
                {"path": f"../{secret.name}/secret.rep"},
                {"text": ";NARRATIVE: 951212 050000.000 NELSON hello\n"},
                {"text": "garbage\x00" * 100},
                {"distance_unit": "km", "include_segments": True},
                {"threshold_kn": -1},
                {"interval_s": 0},
                {"interval_s": 1e-9},
                {"time": "half past ten"},
                {"time": "2024-11-14T21:16:53Z", "distance_unit": "yd"},
                {"max_segments": 10**9},
            ],
            "context_type": ["single", "multi", "region", "none", "galaxy"],
            "kinds": [["track"], ["zone"], [], ["x" * 100]],
            "target": ["nope", ["a", "b"], "debrief-calc:runs/../../x", "", MANY_LONG_IDS, MANY_LONG_IDS[0] * 30],
            "task": ["narrate-result", "summarize-analysis", "hack"],
            "ticket": ["", "abc", "../../pending/x"],
            "result": ["# Narrative", "R" * 300_000],
        }
    return {
        "filename": plots,
        "target": plots,
        "ids": [["f-1"], ["no-such"], [1, 2], [], MANY_LONG_IDS],
        "selectedIds": [["f-1"], ["f-1", "z-1"], ["no-such"], [], [1], MANY_LONG_IDS],
        "kinds": [["track"], ["zone"], []],
        "detail": ["summary", "full", "raw"],
        "limit": [1, 5, 1000, 0, 1001],
        "cursor": ["", "abc", "x" * 3000],
        "width": [64, 200, 2048, 0, 10**6],
        "height": [64, 150, 2048, -1],
        "time": ["2024-11-15T10:00:00Z", "not a time", ""],
        "padding": [0, 0.1, 10, -1, 11],
        "task": ["summarize-plot", "describe-selection", "narrate-timeline", "hack"],
        "ticket": ["", "abc", "../../pending/x"],
        "result": ["# Plot", "R" * 300_000],
    }


@dataclass
class Plan:
    """What was sent: ids that must be answered (and what each was), ids that may be."""

    must: dict[tuple[str, Any], tuple[str, str | None]] = field(default_factory=dict)
    maybe: set[tuple[str, Any]] = field(default_factory=set)
    extreme_paths: set[tuple[str, Any]] = field(default_factory=set)  # over NAME_MAX, or hundreds deep
    lines: list[bytes] = field(default_factory=list)
    line_ids: list[Any] = field(default_factory=list)  # per line: the id that must be answered, or None


class MessageStream:
    def __init__(self, script: str, tools: dict[str, dict[str, Any]], ws: Path, secret: Path, seed: int):
        self.script = script
        self.rng = random.Random(f"{seed}:{script}")
        self.tools = tools
        self.fuzzer = Fuzzer(self.rng, hostile_strings(ws, secret), plausible_values(script, ws, secret))
        self.bad_plots = [
            "missing.plot.json",
            "evil.plot.json",
            f"../{secret.name}/outside.plot.json",
            str(secret / "outside.plot.json"),
            "escape/outside.plot.json",
            LARGE + "\x00",
            LARGE + " ",
            "LARGE-SAMPLE.PLOT.JSON",
            "large-sample.plot",
            "../" + ws.name + "/" + LARGE,
            "C:\\" + LARGE,
            "\\\\srv\\s\\" + LARGE,
            "",
            "boat1.rep",
        ]
        self.plan = Plan()
        self._n = 999  # the driver's own ids (handshake, final checks) stay below 100
        self._maybe_n = 0

    # -- ids -----------------------------------------------------------------------------------

    def must_id(self) -> Any:
        self._n += 1
        n = self._n
        form = self.rng.randrange(10)
        id_: Any = {
            0: n,
            1: -n,
            2: 2**64 + n,
            3: -(2**70) - n,
            4: f"s-{n}",
            5: f"ü-{n}-😀",
            6: str(n),
            7: f"nul\x00{n}",
            8: "L" * 500 + str(n),
            9: n,
        }[form]
        if n == 1000:
            id_ = ""  # the empty string is a valid id too (once)
        if n == 1001:
            id_ = 0
        return id_

    def maybe_id(self) -> Any:
        self._maybe_n += 1
        m = 10**12 + self._maybe_n
        form = self.rng.randrange(6)
        if form == 0:
            id_: Any = m + 0.5
        elif form == 1:
            id_ = float(m)
            self.plan.maybe.add(id_key(m))  # a parser that coerces 1e12.0 to an int answers m
        elif form == 2:
            id_ = self.rng.choice([None, True, False, {"a": 1}, [m]])
        else:
            id_ = m if form == 3 else f"maybe-{m}"
        self.plan.maybe.add(id_key(id_))
        return id_

    # -- lines -----------------------------------------------------------------------------------

    def add(self, msg: Any, *, must: tuple[str, str | None] | None = None) -> None:
        text = json.dumps(msg, ensure_ascii=False)  # NaN and Infinity go out as JS literals, on purpose
        data = text.encode("utf-8", "surrogatepass")
        if RAW_BYTES in text:
            data = data.replace(RAW_BYTES.encode(), b"\xff\xfe\xc3")
        self.raw(data, msg["id"] if must is not None else None)
        if must is not None:
            key = id_key(msg["id"])
            assert key not in self.plan.must
            self.plan.must[key] = must

    def raw(self, data: bytes, must_id: Any = None) -> None:
        self.plan.lines.append(data)
        self.plan.line_ids.append(must_id)

    def request(self, method: str, params: Any = None, *, must: tuple[str, str | None] | None = None) -> None:
        msg: dict[str, Any] = {"jsonrpc": "2.0", "id": self.must_id(), "method": method}
        if params is not None or self.rng.random() < 0.3:
            msg["params"] = params if params is not None else {}
        self.add(msg, must=must or ("other", method))
        if method == "tools/call" and has_extreme_path(params):
            self.plan.extreme_paths.add(id_key(msg["id"]))

    def tool_call(self) -> None:
        rng = self.rng
        r = rng.random()
        if r < 0.08:
            name = rng.choice(
                ["nope", "", " ", "GET_ARTIFACT", "run_tool ", "debrief_get_features\x00", "x" * 5000, "tools/list"]
            )
            self.request("tools/call", {"name": name, "arguments": {}}, must=("unknown_tool", name))
            return
        name = rng.choice(sorted(self.tools))
        args: Any = self.fuzzer.arguments(self.tools[name])
        if self.script == "debrief-state-mcp" and name in STATE_PLOT_WRITERS:
            state_defect(rng, name, args, self.bad_plots)
        kind = "state_writer" if self.script == "debrief-state-mcp" and name in STATE_PLOT_WRITERS else "tool"
        params: dict[str, Any] = {"name": name, "arguments": args}
        r = rng.random()
        if r < 0.04:
            params["arguments"] = rng.choice([[1, 2], "args", 5, True])
            kind = "bad_arguments"
        elif r < 0.07 and kind == "tool":  # a plot writer without its defect would be a fair call
            del params["arguments"]
        elif r < 0.10:
            params["_meta"] = rng.choice([{"progressToken": "p-1"}, {"progressToken": 7}, {"x": 1}])
        elif r < 0.13:
            # raw bytes that are not UTF-8 inside a string: the transport decodes with replacement
            args["path" if "path" in self.tools[name].get("properties", {}) else "filename"] = f"src/{RAW_BYTES}.py"
        self.request("tools/call", params, must=(kind, name))

    def malformed(self) -> None:
        rng = self.rng
        r = rng.random()
        valid = {"jsonrpc": "2.0", "id": self.maybe_id(), "method": "tools/list"}
        if r < 0.15:  # not JSON at all
            self.raw(
                rng.choice(
                    [
                        b"this line is not JSON",
                        b"{",
                        b"}",
                        b"\xff\xfe\x00garbage",
                        b"\x00\x00\x00",
                        b"Content-Length: 52",
                        b"[1,2,",
                        b"{'jsonrpc': '2.0'}",
                        b"\xef\xbb\xbf" + json.dumps(valid).encode(),
                        bytes(rng.randrange(256) for _ in range(rng.randint(1, 200))).replace(b"\n", b" "),
                    ]
                )
            )
        elif r < 0.3:  # truncated JSON
            text = json.dumps(valid)
            self.raw(text[: rng.randrange(1, len(text) - 1)].encode())
        elif r < 0.4:  # JSON that is not an object
            self.add(rng.choice([1, -2.5, "str", None, True, [], [1, "a"], [[{}]], ""]))
        elif r < 0.5:  # a batch (removed from MCP; may be refused, never answered twice)
            self.add(
                [
                    {"jsonrpc": "2.0", "id": self.maybe_id(), "method": rng.choice(["ping", "tools/list"])}
                    for _ in range(rng.randint(1, 4))
                ]
            )
        elif r < 0.6:  # wrong or missing jsonrpc
            msg = dict(valid)
            version = rng.choice(["1.0", "2", 2.0, None, "2.0 ", "", "missing"])
            if version == "missing":
                del msg["jsonrpc"]
            else:
                msg["jsonrpc"] = version
            self.add(msg)
        elif r < 0.7:  # odd ids, or params that are not an object
            msg = {"jsonrpc": "2.0", "id": self.maybe_id(), "method": rng.choice(["ping", "tools/list", "tools/call"])}
            if rng.random() < 0.5:
                msg["params"] = rng.choice(["x", [1], 5, None, True])
            self.add(msg)
        elif r < 0.78:  # answers to requests the server never sent
            msg2: dict[str, Any] = {"jsonrpc": "2.0", "id": self.maybe_id()}
            if rng.random() < 0.5:
                msg2["result"] = self.fuzzer.value()
            else:
                msg2["error"] = {"code": rng.choice([-32600, 0, "x"]), "message": random_text(rng)}
            self.add(msg2)
        elif r < 0.84:  # ill-formed Unicode (lone surrogates) in an otherwise fine request
            text = json.dumps({"jsonrpc": "2.0", "id": self.maybe_id(), "method": "tools/call"})
            text = text[:-1] + ', "params": {"name": "x\\ud800", "arguments": {"path": "\\udfff"}}}'
            self.raw(text.encode())
        elif r < 0.9:  # a method with neither id nor a known notification name, or a bad method type
            self.add({"jsonrpc": "2.0", "id": self.maybe_id(), "method": rng.choice([None, 5, ["tools/list"], {}])})
        else:  # duplicate keys: whichever id a parser keeps, it is one of ours
            a, b = self.maybe_id(), self.maybe_id()
            self.raw(
                (
                    '{"jsonrpc": "2.0", "id": ' + json.dumps(a) + ', "method": "ping", "id": ' + json.dumps(b) + "}"
                ).encode()
            )

    def notification(self) -> None:
        rng = self.rng
        method = rng.choice(
            [
                "notifications/initialized",
                "notifications/cancelled",
                "notifications/progress",
                "notifications/roots/list_changed",
                "notifications/message",
                "notifications/nope",
                "tools/list",  # a request method sent as a notification: nobody to answer
                "tools/call",
            ]
        )
        msg: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if method == "notifications/cancelled":
            msg["params"] = {"requestId": rng.choice([10**15 + self._n, "gone", -1]), "reason": random_text(rng)}
        elif method == "tools/call":
            msg["params"] = {"name": "nope", "arguments": {}}
        elif rng.random() < 0.6:
            msg["params"] = self.fuzzer.value() if rng.random() < 0.5 else {"progressToken": 1, "progress": "x"}
        self.add(msg)

    def protocol_request(self) -> None:
        rng = self.rng
        uris = [
            "plots://list",
            f"plot://{LARGE}/features",
            f"plot://{LARGE}/time",
            "plot://evil.plot.json/features",
            "plot://../../etc/passwd/time",
            "plot://%2e%2e%2f%2e%2e%2fetc%2fpasswd/time",
            "plot://escape/outside.plot.json/selection",
            f"plot://{LARGE}/secret",
            "plot://a\x00b/viewport",
            "plot://" + "x" * 5000 + "/time",
            "plot://",
            "file:///etc/passwd",
            "http://127.0.0.1:1/x",
            "data:text/plain,hi",
            "",
            "\\\\srv\\s",
            "C:\\x",
        ]
        r = rng.random()
        if r < 0.1:
            self.request("ping", rng.choice([None, {}, {"_meta": {"x": 1}}]))
        elif r < 0.2:
            self.request("tools/list", rng.choice([None, {}, {"cursor": random_text(rng)}]))
        elif r < 0.3:
            self.request(rng.choice(["prompts/list", "resources/list", "resources/templates/list"]))
        elif r < 0.45:
            name = rng.choice(["tool-descriptions", "nope", "", "tool-descriptions ", "x" * 3000, "../etc"])
            args = rng.choice([None, {}, {"a": "b"}, {"x": random_text(rng)}])
            self.request("prompts/get", {"name": name, **({"arguments": args} if args is not None else {})})
        elif r < 0.62:
            self.request("resources/read", {"uri": rng.choice(uris)})
        elif r < 0.7:
            self.request(rng.choice(["resources/subscribe", "resources/unsubscribe"]), {"uri": rng.choice(uris)})
        elif r < 0.75:
            self.request("logging/setLevel", {"level": rng.choice(["debug", "info", "zzz", 5])})
        elif r < 0.8:
            self.request("completion/complete", rng.choice([{}, {"ref": {"type": "ref/prompt", "name": "x"}}]))
        elif r < 0.85:
            params = dict(INIT, protocolVersion=rng.choice(["2025-11-25", "1999-01-01", "", "2025-06-18"]))
            self.request("initialize", rng.choice([params, {}, {"protocolVersion": 5}]))
        elif r < 0.9:
            self.request("server/discover", rng.choice([None, {}]))
        else:
            method = rng.choice(["nope", "", "rpc.discover", "tools/call/x", "notifications/initialized", "TOOLS/LIST"])
            params = self.fuzzer.value(3)
            self.request(
                method + (random_text(rng) if rng.random() < 0.3 else ""), params if isinstance(params, dict) else None
            )

    def build(self, count: int) -> Plan:
        rng = self.rng
        for _ in range(count):
            r = rng.random()
            if r < 0.55:
                self.tool_call()
            elif r < 0.75:
                self.protocol_request()
            elif r < 0.93:
                self.malformed()
            else:
                self.notification()
        # A few over the input cap (5 MB): refused with PAYLOAD_TOO_LARGE, not a crash.
        for _ in range(2):
            name = rng.choice(sorted(self.tools))
            prop = next(iter(self.tools[name].get("properties") or {}), "padding")
            args = {prop: "P" * 5_200_000}
            if self.script == "debrief-state-mcp" and name in STATE_PLOT_WRITERS:
                state_defect(rng, name, args, self.bad_plots)
            kind = "state_writer" if self.script == "debrief-state-mcp" and name in STATE_PLOT_WRITERS else "tool"
            self.request("tools/call", {"name": name, "arguments": args}, must=(kind, name))
        return self.plan


# -- the checks --------------------------------------------------------------------------------


def has_extreme_path(value: Any) -> bool:
    """Whether a string in ``value`` has a segment longer than a file name may be, or 200+ segments."""
    if isinstance(value, str):
        parts = re.split(r"[/\\]", value)
        return len(parts) > 200 or any(len(part.encode("utf-8", "surrogatepass")) > 200 for part in parts)
    if isinstance(value, dict):
        return any(has_extreme_path(v) for v in value.values())
    if isinstance(value, list):
        return any(has_extreme_path(v) for v in value)
    return False


def check_tool_answer(
    key: tuple[str, Any], what: tuple[str, str | None], ans: dict[str, Any], known: list[str], extreme: bool = False
) -> str | None:
    kind, name = what
    if kind == "unknown_tool":
        if ans.get("error", {}).get("code") != -32602:
            return f"unknown tool {name!r} (id {key[1]!r}) not answered with -32602: {str(ans)[:300]}"
        return None
    if kind == "bad_arguments":
        return None  # arguments that are not an object: a JSON-RPC error or a tool error, both fine
    if kind not in ("tool", "state_writer"):
        return None
    if ans.get("error", {}).get("code") == -32600 and "recursion limit" in ans["error"].get("message", ""):
        return None  # nested past the parser's limit: refused as an invalid request, as it should be
    result = ans.get("result")
    if not isinstance(result, dict) or not isinstance(result.get("content"), list):
        return f"{name} (id {key[1]!r}) answered without a tool result: {str(ans)[:300]}"
    for block in result["content"]:
        if block.get("type") == "text" and len(block.get("text", "")) > ANSWER_CAP:
            return f"{name} (id {key[1]!r}) answered {len(block['text'])} characters, over the cap"
    if result.get("isError"):
        error = (result.get("structuredContent") or {}).get("error") or {}
        code = error.get("code")
        if not isinstance(code, str) or not ERROR_CODE.match(code):
            return f"{name} (id {key[1]!r}) failed without a structured error code: {str(result)[:300]}"
        if code == "INTERNAL":
            return f"{name} (id {key[1]!r}) failed with INTERNAL: {str(result)[:300]}"
    elif kind == "state_writer":
        return f"{name} (id {key[1]!r}) accepted a call with a defect: {str(result)[:400]}"
    return None


def final_checks(server: RawServer, script: str) -> None:
    listed = server.request("tools/list")
    server.wait_for([listed], 60)
    assert server.answer(listed)["result"]["tools"], "tools/list after the fuzz"
    if script == "llmem-mcp":
        r = server.call_tool("generate_artifact", {"path": "src/app.py"})
        assert not r["isError"], r
        r = server.call_tool("get_artifact", {"path": "src/app.py"})
        assert not r["isError"] and r["structuredContent"]["data"]["content"], r
    elif script == "debrief-calc-mcp":
        track = json.loads((DATA / "calc-track-single.geojson").read_text(encoding="utf-8"))
        r = server.call_tool("run_tool", {"tool": "track-stats", "features": [track]})
        assert not r["isError"] and r["structuredContent"]["success"] is True, r
    else:
        r = server.call_tool("debrief_get_features", {"filename": LARGE, "limit": 5})
        assert not r["isError"] and r["structuredContent"]["features"], r


SERVERS = ["llmem-mcp", "debrief-calc-mcp", "debrief-state-mcp"]


@pytest.mark.parametrize("script", SERVERS)
def test_fuzz_over_stdio(script: str, workspace: Path, tmp_path: Path) -> None:
    secret = make_workspace(script, workspace)
    store, logs = workspace / ".llmem", tmp_path / "logs"
    logs.mkdir()
    before = snapshot(tmp_path, store, logs)
    with RawServer(script, workspace, logs / f"{script}.stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        listed = server.request("tools/list")
        server.wait_for([listed], 60)
        tools = {t["name"]: t["inputSchema"] for t in server.answer(listed)["result"]["tools"]}
        plan = MessageStream(script, tools, workspace, secret, SEED).build(MESSAGES)
        own = {id_key(i) for i in range(1, 100)}  # the driver's: handshake and final checks
        assert not own & set(plan.must), "the fuzz reuses an id of the driver"

        sent: list[Any] = []
        for start in range(0, len(plan.lines), CHUNK):  # pipelined: a chunk, then wait for the window
            server.send_lines(plan.lines[start : start + CHUNK])
            sent += [i for i in plan.line_ids[start : start + CHUNK] if i is not None]
            server.wait_outstanding(sent, WINDOW, timeout=60)
        server.wait_for([k[1] for k in plan.must], 60)
        final_checks(server, script)
        assert server.close(timeout=30) == 0, "no clean exit on stdin EOF\n" + server.stderr_tail()

    problems: list[str] = []
    known: list[str] = []
    problems += [f"stdout line that is not JSON-RPC: {line[:200]!r}" for line in server.bad_lines]
    for raw in server.raw_lines:
        text = raw.decode("utf-8", "replace")
        if TRACEBACK.search(text):
            problems.append(f"a traceback in an answer: {text[:400]}")
        if SECRET in text:
            problems.append(f"the secret next door leaked into an answer: {text[:400]}")
    for key, answers in server.answers.items():
        if key in plan.must:
            if len(answers) != 1:
                problems.append(f"id {key[1]!r} answered {len(answers)} times")
                continue
            ans = answers[0]
            if ("result" in ans) == ("error" in ans):
                problems.append(f"id {key[1]!r}: not exactly one of result/error: {str(ans)[:200]}")
            if ans.get("error", {}).get("code") == -32603:
                problems.append(f"id {key[1]!r}: an internal error: {str(ans)[:300]}")
            if problem := check_tool_answer(key, plan.must[key], ans, known, key in plan.extreme_paths):
                problems.append(problem)
        elif key in plan.maybe:
            if len(answers) > 1:
                problems.append(f"malformed message id {key[1]!r} answered {len(answers)} times")
        elif key not in own:
            problems.append(f"an answer under an id nobody sent: {key[1]!r}")
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems[:40])

    after = snapshot(tmp_path, store, logs)
    changed = workspace_changes(before, after)
    assert not changed, f"the fuzz changed the workspace outside .llmem/: {changed[:20]}"
    print(
        f"{script}: {len(plan.lines)} lines, {len(plan.must)} requests answered once each, "
        f"{sum(k in server.answers for k in plan.maybe)} of {len(plan.maybe)} malformed ones answered; "
        f"known bugs seen: {len(known)} (over-cap errors, INTERNAL on extreme paths)"
    )


# -- bugs the fuzz found, each fixed and pinned by a test ------------------------------------


def test_deeply_nested_request_is_answered(workspace: Path, tmp_path: Path) -> None:
    with RawServer("llmem-mcp", workspace, tmp_path / "stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        nested: Any = "x"
        for _ in range(250):
            nested = [nested]
        deep_id = server.request("tools/call", {"name": "get_artifact", "arguments": {"path": "a", "kind": nested}})
        after = server.request("ping")
        server.wait_for([after], 30)  # the server has read (and dropped, or handled) the deep line
        server.wait_for([deep_id], 3)
        assert server.close() == 0


LONG = "a" * 15_000
MANY_UNKNOWN = [f"{'x' * 400}{i}" for i in range(200)]


@pytest.mark.parametrize(
    ("script", "tool", "arguments"),
    [
        ("debrief-calc-mcp", "generate_prompt", {"target": LONG, "task": "narrate-result"}),
        ("debrief-calc-mcp", "run_tool", {"tool": "track-stats", "plot": {"filename": LARGE, "feature_ids": [LONG]}}),
        ("debrief-state-mcp", "debrief_set_selection", {"filename": LARGE, "selectedIds": MANY_UNKNOWN}),
        (
            "debrief-state-mcp",
            "debrief_apply_command",
            {"filename": LARGE, "command": {"command": "deleteFeatures", "payload": MANY_UNKNOWN}},
        ),
        ("llmem-mcp", "x" * 30_000, {}),  # unknown tool: the JSON-RPC error echoes the name whole
    ],
    ids=["calc-prompt-target", "calc-feature-ids", "state-selection", "state-delete", "unknown-tool-name"],
)
def test_error_answers_stay_under_the_cap(
    script: str, tool: str, arguments: dict[str, Any], workspace: Path, tmp_path: Path
) -> None:
    shutil.copy(DATA / "plots" / LARGE, workspace / LARGE)
    with RawServer(script, workspace, tmp_path / "stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        id_ = server.request("tools/call", {"name": tool, "arguments": arguments})
        server.wait_for([id_], 60)
        answer = server.answer(id_)
        if "error" in answer:
            assert answer["error"]["code"] == -32602
            size = len(json.dumps(answer["error"], ensure_ascii=False))
        else:
            assert answer["result"]["isError"] is True
            size = max(len(block.get("text", "")) for block in answer["result"]["content"])
        assert server.close() == 0
    assert size <= ANSWER_CAP, f"the error answer is {size} characters"


def test_refused_plot_write_leaves_the_workspace_alone(workspace: Path, tmp_path: Path) -> None:
    shutil.copy(DATA / "plots" / SAMPLE, workspace / SAMPLE)
    before = sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*"))
    with RawServer("debrief-state-mcp", workspace, tmp_path / "stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        command = {"command": "logMessage", "payload": "hello"}
        r = server.call_tool("debrief_apply_command", {"filename": "new/folder/x.plot.json", "command": command})
        assert r["isError"] and r["structuredContent"]["error"]["code"] == "PLOT_NOT_FOUND"
        r = server.call_tool(
            "debrief_set_viewport", {"filename": "y.plot.json", "viewportState": {"bounds": [0, 0, 1, 1]}}
        )
        assert r["isError"] and r["structuredContent"]["error"]["code"] == "PLOT_NOT_FOUND"
        assert server.close() == 0
    after = sorted(
        p.relative_to(workspace).as_posix()
        for p in workspace.rglob("*")
        if ".llmem" not in p.relative_to(workspace).parts
    )
    assert after == before


@pytest.mark.parametrize(
    "params",
    [{"name": "nope"}, {"name": "tool-descriptions", "arguments": {"a": "b"}}],
    ids=["unknown-name", "unexpected-arguments"],
)
def test_prompt_errors_are_invalid_params(params: dict[str, Any], workspace: Path, tmp_path: Path) -> None:
    with RawServer("llmem-mcp", workspace, tmp_path / "stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        id_ = server.request("prompts/get", params)
        server.wait_for([id_], 30)
        assert server.close() == 0
    assert server.answer(id_)["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("script", "tool", "arguments"),
    [
        ("llmem-mcp", "generate_artifact", {"path": "x" * 300}),
        ("llmem-mcp", "generate_prompt", {"path": "x" * 300, "task": "summarize"}),
        ("llmem-mcp", "delete_artifact", {"path": "x" * 300}),
        (
            "debrief-state-mcp",
            "debrief_apply_command",
            {"filename": "x" * 300 + ".plot.json", "command": {"command": "logMessage", "payload": "x"}},
        ),
        (
            "debrief-state-mcp",
            "debrief_set_viewport",
            {"filename": "y" * 240 + ".plot.json", "viewportState": {"bounds": [0, 0, 1, 1]}},
        ),
        ("llmem-mcp", "delete_artifact", {"path": "a/" * 1500 + "x", "kind": "outline"}),
    ],
    ids=["llmem-parse", "llmem-prompt", "llmem-delete", "state-apply", "state-lock-name-only", "llmem-delete-deep"],
)
def test_extreme_paths_are_refused_not_internal(
    script: str, tool: str, arguments: dict[str, Any], workspace: Path, tmp_path: Path
) -> None:
    with RawServer(script, workspace, tmp_path / "stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        result = server.call_tool(tool, arguments)
        assert server.close() == 0
    assert result["isError"] is True
    assert result["structuredContent"]["error"]["code"] != "INTERNAL"


def test_refused_delete_leaves_the_store_alone(workspace: Path, tmp_path: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("X = 1\n", encoding="utf-8")
    store = workspace / ".llmem"
    with RawServer("llmem-mcp", workspace, tmp_path / "stderr.log", env=UNLIMITED_RATES) as server:
        server.initialize()
        assert not server.call_tool("generate_artifact", {"path": "src/app.py"})["isError"]
        before = _store_files(store)
        result = server.call_tool("delete_artifact", {"path": "no/such/folder/file.py", "kind": "outline"})
        assert not result["isError"] and result["structuredContent"]["data"]["deleted"] == 0
        assert server.close() == 0
    assert _store_files(store) == before


def _store_files(store: Path) -> list[str]:
    """The store's files, less SQLite's write-ahead log and shared memory beside the search
    database: they come with an open connection and go when the process ends, whatever it did."""
    return sorted(p.relative_to(store).as_posix() for p in store.rglob("*") if not p.name.endswith(("-wal", "-shm")))
