"""The first parse of a large real Python tree, beside a bare ``ast`` walk and universal-ctags.

    python benchmarks/bench_first_parse.py [--quick]

The tree: packages of the running Python's standard library (asyncio, email, json, logging,
http, unittest, xml, concurrent, importlib, multiprocessing, urllib, tomllib) and its top-level
modules, copied to a temporary folder: real code, present on every machine and in CI.

- ours: ``Llmem.parse(".")`` into an empty store, everything included (walk, outline, store);
- bare walk: ``ast.parse`` + ``ast.walk`` of the same files' bytes, already in memory, on one
  thread — what a single-threaded parser cannot beat;
- universal-ctags: ``ctags -R`` of the same tree to /dev/null (skipped with the reason when the
  ``ctags`` on PATH is missing or is not universal-ctags).

Target (the issue): the first parse at least as fast as the bare single-threaded walk.
"""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import Section, ratio, s

from llmem.code.artifacts import Llmem
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

PACKAGES = (
    "asyncio",
    "email",
    "json",
    "logging",
    "http",
    "unittest",
    "xml",
    "concurrent",
    "importlib",
    "multiprocessing",
    "urllib",
    "tomllib",
)


def make_tree(dest: Path, quick: bool) -> Path:
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    dest.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "test", "tests")
    for name in PACKAGES[:2] if quick else PACKAGES:
        if (stdlib / name).is_dir():
            shutil.copytree(stdlib / name, dest / name, ignore=ignore)
    if not quick:
        for module in stdlib.glob("*.py"):
            shutil.copy2(module, dest / module.name)
    return dest


def bare_walk(files: list[Path]) -> float:
    datas = [f.read_bytes() for f in files]
    start = time.perf_counter()
    for data in datas:
        for _node in ast.walk(ast.parse(data)):
            pass
    return time.perf_counter() - start


def universal_ctags() -> str | None:
    exe = shutil.which("ctags")
    if exe is None:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    return exe if "Universal Ctags" in out else None


def collect(tmp: Path, quick: bool) -> Section:
    section = Section("llmem-mcp")
    tree = make_tree(tmp / "first_parse_src", quick)
    files = sorted(p for p in tree.rglob("*.py") if p.is_file())
    lines = sum(p.read_bytes().count(b"\n") for p in files)
    walk = min(bare_walk(files) for _ in range(1 if quick else 2))
    runs = []
    for n in range(1 if quick else 2):
        ws = tmp / f"first_parse_ws{n}"
        shutil.copytree(tree, ws)
        svc = Llmem(ArtifactStore(ws / ".llmem", ws.resolve()), Limits())
        start = time.perf_counter()
        result = svc.parse(".")
        runs.append(time.perf_counter() - start)
        if result["parsed"] != len(files) or result["failed"]:
            raise RuntimeError(f"first parse: {result['parsed']} parsed, {result['failed']} failed of {len(files)}")
    ours = min(runs)
    label = f"{len(files)} files, {lines:,} lines"
    section.add(f"first parse of stdlib ({label}), vs bare ast walk", s(ours), s(walk), ratio(ours, walk))
    ctags = universal_ctags()
    if ctags is None:
        section.notes.append("first parse vs universal-ctags: skipped (no universal-ctags on PATH)")
    else:
        start = time.perf_counter()
        subprocess.run([ctags, "-R", "-f", "/dev/null", str(tree)], check=True, capture_output=True)
        took = time.perf_counter() - start
        section.add("same first parse, vs universal-ctags -R", s(ours), s(took), ratio(ours, took))
    section.target(
        "first parse at least as fast as a bare single-threaded ast walk",
        ours <= walk,
        f"{ours:.2f} s vs {walk:.2f} s ({walk / ours:.2f}x the walk's speed), {label}",
    )
    return section


def main() -> None:
    harness.script_main("llmem-mcp first parse", __doc__, collect)


if __name__ == "__main__":
    main()
