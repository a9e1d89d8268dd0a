"""Outline recall on real trees: of the declarations another tool finds, how many our outlines have.

    python benchmarks/bench_recall.py [--quick] [--tree DIR ...]

Trees: this repository's ``llmem`` and ``debrief_calc`` (Python) and the TypeScript/JavaScript
sources of ``tests/js/node_modules`` (the MCP SDK and inspector, as ``.ci/run`` installs them;
skipped with the reason when absent), plus any ``--tree`` (e.g. a checkout of
modelcontextprotocol/servers), whose files are added to the tree of their language. Two
references, each on the same files:

- universal-ctags (``ctags -R --output-format=json``): classes, functions, methods, members and
  the like; skipped with the reason when no universal-ctags is on PATH. Data members (module
  variables and constants, fields, properties, enum members) are a figure of their own, so that
  the declaration figure stays comparable with earlier runs;
- simple declaration patterns (``def``/``class``; ``function``/``class``/``const f = (…) =>``).

A reference declaration counts as found when the outline has a symbol of the same name starting
on that line (or up to two lines above it: decorators and doc comments). The figure is recall,
ours beside 1.0; the misses are listed, a few per tree.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import Section

from llmem.code.outline import build_outline, detect_language, iter_symbols

ROOT = Path(__file__).resolve().parents[1]
CTAGS_KINDS = {
    "Python": {"class", "function", "member"},
    "JavaScript": {"class", "function", "method", "generator"},
    "TypeScript": {"class", "function", "method", "interface", "enum", "alias"},
}
#: Data members (outlined since the third round): variables, constants, fields, properties,
#: enum members. JavaScript's ``property`` is left out: ctags gives it to every key of an object
#: literal, which an outline does not expand (a huge literal is one symbol). In TypeScript and
#: JavaScript only members of a class/interface/enum and module-level ``const``/``let``/``var``
#: count (see :func:`_declared`): ctags also tags the locals of functions and callbacks (an
#: outline lists no locals) and, a quirk, names inside array literals.
CTAGS_DATA_KINDS = {
    "Python": {"variable"},
    "JavaScript": {"variable", "constant", "field"},
    "TypeScript": {"variable", "constant", "property", "enumerator"},
}
PATTERNS = {
    "python": re.compile(r"^\s*(?:async\s+)?(?:def|class)\s+([A-Za-z_]\w*)"),
    "js": re.compile(
        r"^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:function\*?\s+([A-Za-z_$][\w$]*)|class\s+([A-Za-z_$][\w$]*)"
        r"|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>))"
    ),
}
MAX_FILES = 1_500


def _extra_trees() -> list[Path]:
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tree", type=Path, action="append", default=[])
    return [p.resolve() for p in parser.parse_known_args()[0].tree]


def _trees(quick: bool) -> dict[str, list[Path]]:
    extra = _extra_trees()
    py = sorted(p for d in ("llmem", "debrief_calc") for p in (ROOT / d).rglob("*.py"))
    py += sorted(p for t in extra for p in t.rglob("*.py") if "node_modules" not in p.parts and ".venv" not in p.parts)
    nm = ROOT / "tests" / "js" / "node_modules"
    js: list[Path] = []
    for tree in ([nm] if nm.is_dir() else []) + extra:
        for ext in ("*.ts", "*.js", "*.mjs"):
            js += [
                p
                for p in tree.rglob(ext)
                if p.is_file()
                and not p.name.endswith((".d.ts", ".min.js"))
                and p.stat().st_size < 300_000
                and ("test" not in p.parts or tree != nm)
                and (tree == nm or "node_modules" not in p.parts)
                and not _minified(p)
            ]
    if js:
        js = sorted(js)[: 200 if quick else MAX_FILES]
    ts = [p for p in js if p.suffix == ".ts"]
    js = [p for p in js if p.suffix != ".ts"]
    return {"python": py[:40] if quick else py, "typescript": ts, "javascript": js}


def _minified(path: Path) -> bool:
    """A bundle squeezed onto a few long lines: no tool's line numbers mean much there."""
    data = path.read_bytes()
    return len(data) > 2_000 and len(data) / max(1, data.count(b"\n")) > 250


def _ours(path: Path) -> set[tuple[str, int]]:
    outline = build_outline(path.name, path.read_bytes())
    return {(s.name, s.start_line) for s in iter_symbols(outline)}


def _found(ours: set[tuple[str, int]], name: str, line: int) -> bool:
    return any((name, at) in ours for at in (line, line - 1, line - 2))


def _ctags(files: list[Path], exe: str, table: dict[str, set[str]] = CTAGS_KINDS) -> dict[Path, list[tuple[str, int]]]:
    listing = "\n".join(str(p) for p in files)
    out = subprocess.run(
        [exe, "--output-format=json", "--fields=+nKlZ", "-L", "-", "-f", "-"],
        input=listing,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: dict[Path, list[tuple[str, int]]] = {}
    lines: dict[str, list[str]] = {}
    for line in out.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") != "tag":
            continue
        kinds = table.get(tag.get("language", ""), set())
        name = str(tag.get("name") or "")
        if tag.get("kind") in kinds and name and not name.startswith("AnonymousFunction") and "line" in tag:
            if table is CTAGS_DATA_KINDS and tag.get("language") in ("TypeScript", "JavaScript"):
                text = lines.get(tag["path"])
                if text is None:
                    text = lines[tag["path"]] = Path(tag["path"]).read_text(errors="replace").splitlines()
                if not _declared(tag, text):
                    continue
            found.setdefault(Path(tag["path"]), []).append((tag["name"], int(tag["line"])))
    return found


def _declared(tag: dict[str, Any], text: list[str]) -> bool:
    """A TS/JS data tag that is a member of a class, interface or enum, or a module-level declaration."""
    if tag.get("scopeKind") in ("class", "interface", "enum"):
        return True
    line = int(tag["line"])
    return line <= len(text) and bool(_TOP_DECLARATION.match(text[line - 1]))


_TOP_DECLARATION = re.compile(r"(?:export\s+)?(?:declare\s+)?(?:const|let|var)\s")


def _patterns(path: Path) -> list[tuple[str, int]]:
    pattern = PATTERNS["python" if path.suffix == ".py" else "js"]
    out = []
    for n, text in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        m = pattern.match(text)
        if m:
            out.append((next(g for g in m.groups() if g), n))
    return out


def _recall(
    refs: dict[Path, list[tuple[str, int]]], ours: dict[Path, set[tuple[str, int]]]
) -> tuple[float, int, list[str]]:
    total = hit = 0
    misses: list[str] = []
    for path, tags in refs.items():
        have = ours.get(path, set())
        for name, line in tags:
            total += 1
            if _found(have, name, line):
                hit += 1
            elif len(misses) < 5:
                misses.append(f"{path.name}:{line} {name}")
    return (hit / total if total else 1.0), total, misses


def collect(tmp: Path, quick: bool) -> Section:
    del tmp
    section = Section("llmem-mcp")
    exe = shutil.which("ctags")
    if (
        exe is not None
        and "Universal Ctags"
        not in subprocess.run([exe, "--version"], capture_output=True, text=True, check=False).stdout
    ):
        exe = None
    for label, tree in _trees(quick).items():
        files = [f for f in tree if detect_language(f.name)]
        if not files:
            section.notes.append(f"outline recall, {label}: skipped (no files: run npm ci --prefix tests/js)")
            continue
        ours = {f: _ours(f) for f in files}
        if exe is None:
            section.notes.append(f"outline recall vs universal-ctags, {label}: skipped (no universal-ctags on PATH)")
        else:
            recall, total, misses = _recall(_ctags(files, exe), ours)
            section.add(f"outline recall vs universal-ctags, {label} ({total:,} tags)", f"{recall:.3f}", "1.000", "-")
            if misses:
                section.notes.append(f"missed vs ctags ({label}): " + "; ".join(misses))
            recall, total, misses = _recall(_ctags(files, exe, CTAGS_DATA_KINDS), ours)
            section.add(
                f"data-member recall vs universal-ctags, {label} ({total:,} tags)", f"{recall:.3f}", "1.000", "-"
            )
            if misses:
                section.notes.append(f"missed data members vs ctags ({label}): " + "; ".join(misses))
        recall, total, misses = _recall({f: _patterns(f) for f in files}, ours)
        section.add(f"outline recall vs declaration patterns, {label} ({total:,})", f"{recall:.3f}", "1.000", "-")
        if misses:
            section.notes.append(f"missed vs patterns ({label}): " + "; ".join(misses))
    return section


def main() -> None:
    harness.script_main("llmem-mcp outline recall", __doc__, collect, add_args=_add_args)


def _add_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tree", type=Path, action="append", help="another folder of sources (repeatable)")


if __name__ == "__main__":
    main()
