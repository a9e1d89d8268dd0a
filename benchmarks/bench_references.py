"""find_references on real trees: recall against ``grep -w`` and latency beside a bare ``grep -rnw``.

    python benchmarks/bench_references.py [--quick] [--servers PATH]

Trees: this repository, and a checkout of modelcontextprotocol/servers (``--servers``, default
``/work/servers-checkout``; skipped with the reason when absent). For each name of a fixed set:

- recall: the lines ``grep -nw NAME`` finds in the code files (Python, TypeScript, TSX,
  JavaScript, Go, Rust, Java) among the files ``find_references`` scans — the same file list is
  handed to grep — found by ``find_references(NAME)`` (without ``path``) as a use of any kind,
  over those lines less the definition lines of the name (answered apart, in ``definitions``);
  comments and strings stay in, answered as ``kind: "text"`` (a second row says how many of
  the lines came back as ``import``/``call``/``reference`` rather than ``text``);
- latency, beside the p50 of a bare ``grep -rnw NAME`` subprocess over the tree
  (``--exclude-dir`` .git, .venv, node_modules, .llmem), as ratios: ``ReferenceFinder.find``
  in this process for a name asked before (each file keeps the places of the last words asked),
  for a name not asked before (60 identifiers of the tree picked by a hash, once the files are
  read and parsed), and with ``path`` (imports followed); and the cold first call of a fresh
  process (the walk, every file read, the files that hold the name parsed) timed inside that
  process, beside one grep.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import Section

from llmem.code.references import ReferenceFinder
from llmem.code.references_parse import CODE_LANGUAGES, language_of

ROOT = Path(__file__).resolve().parents[1]
SERVERS = Path("/work/servers-checkout")
NAMES = {
    "servers": [
        "serve",
        "isPathWithinAllowedDirectories",
        "validatePath",
        "normalizePath",
        "validate_repo_path",
        "git_status",
        "GitTools",
        "Server",
        "main",
    ],
    "this repository": [
        "resolve_in_workspace",
        "ArtifactStore",
        "SuiteError",
        "InvalidArgument",
        "walk_workspace",
        "build_outline",
        "split_words",
        "Llmem",
        "tool_annotations",
    ],
}
#: (symbol, defining file) asked with path: imports followed (and a module's importers, by its name).
PATHS = {
    "servers": [
        ("serve", "src/git/src/mcp_server_git/server.py"),
        ("isPathWithinAllowedDirectories", "src/filesystem/path-validation.ts"),
        ("server", "src/git/src/mcp_server_git/server.py"),
    ],
    "this repository": [
        ("resolve_in_workspace", "llmem/core/paths.py"),
        ("ArtifactStore", "llmem/core/store.py"),
        ("paths", "llmem/core/paths.py"),
    ],
}
WARM_RUNS = 30
EXCLUDE = ("--exclude-dir=.git", "--exclude-dir=.venv", "--exclude-dir=node_modules", "--exclude-dir=.llmem")
COLD = (
    "import sys, time; from pathlib import Path; from llmem.code.references import ReferenceFinder; "
    "t = time.perf_counter(); ReferenceFinder(Path(sys.argv[1])).find(sys.argv[2]); "
    "print(time.perf_counter() - t)"
)


def _fresh_names(root: Path, code: list[str], asked: set[str], n: int) -> list[str]:
    """``n`` identifiers of the tree's code, none asked yet, picked by a hash (the same every run)."""
    words: set[str] = set()
    for rel in code:
        words |= set(re.findall(r"\b[A-Za-z_][A-Za-z0-9_]{5,}\b", (root / rel).read_text("utf-8", "replace")))
    ranked = sorted(words - asked, key=lambda w: hashlib.blake2b(w.encode(), digest_size=8).digest())
    return ranked[:n]


def _servers_path() -> Path:
    argv = sys.argv[1:]
    if "--servers" in argv and argv.index("--servers") + 1 < len(argv):
        return Path(argv[argv.index("--servers") + 1])
    return SERVERS


def _grep_lines(root: Path, name: str, files: list[str]) -> set[tuple[str, int]]:
    found: set[tuple[str, int]] = set()
    for at in range(0, len(files), 500):
        out = subprocess.run(
            ["grep", "-nwH", "--", name, *files[at : at + 500]],
            cwd=root,
            capture_output=True,
            text=True,
            errors="replace",
            check=False,
        ).stdout
        for row in out.splitlines():
            path, line, _ = row.split(":", 2)
            found.add((path, int(line)))
    return found


def _all_pages(finder: ReferenceFinder, name: str) -> dict[str, object]:
    answer = finder.find(name, limit=500, answer_chars=10_000_000)
    assert answer["next_cursor"] is None
    return answer


def _grep_time(root: Path, name: str) -> float:
    start = time.perf_counter()
    subprocess.run(["grep", "-rnw", *EXCLUDE, "--", name, "."], cwd=root, capture_output=True, check=False)
    return time.perf_counter() - start


def _tree(section: Section, label: str, root: Path, names: list[str], quick: bool) -> None:
    finder = ReferenceFinder(root)
    finder.find(names[0])
    code = [k for k in finder.src.paths() if language_of(k) in CODE_LANGUAGES]
    grep_total = found_total = code_total = 0
    misses: list[str] = []
    for name in names:
        answer = _all_pages(finder, name)
        results = answer["results"]
        definitions = answer["definitions"]
        assert isinstance(results, list) and isinstance(definitions, list)
        ours = {(r["path"], r["line"]) for r in results}
        as_code = {(r["path"], r["line"]) for r in results if r["kind"] != "text"}
        defs = {(d["path"], d["line"]) for d in definitions} - ours
        grep = _grep_lines(root, name, code) - defs
        hit = grep & ours
        grep_total += len(grep)
        found_total += len(hit)
        code_total += len(grep & as_code)
        recall = len(hit) / len(grep) if grep else 1.0
        section.add(f"recall vs grep -w, {label}: {name} ({len(grep)} lines)", f"{recall:.3f}", "1.000", "-")
        misses += [f"{p}:{n}" for p, n in sorted(grep - ours)[:3]]
    overall = found_total / grep_total if grep_total else 1.0
    section.add(f"recall vs grep -w, {label}: all names ({grep_total} lines)", f"{overall:.3f}", "1.000", "-")
    share = code_total / grep_total if grep_total else 1.0
    section.add(f"of those, answered as import/call/reference (not text), {label}", f"{share:.3f}", "-", "-")
    section.target(f"recall ≥ 0.95 ({label})", overall >= 0.95, f"{overall:.3f}")
    if misses:
        section.notes.append(f"missed ({label}): " + "; ".join(misses[:12]))
    files = len(finder.src.paths())
    grep_t = [_grep_time(root, names[n % len(names)]) for n in range(WARM_RUNS)]
    grep_p50, _ = harness.percentiles(grep_t)

    def row(figure: str, seconds: list[float]) -> float:
        p50, p95 = harness.percentiles(seconds)
        section.add(f"{figure} p50, {label}", harness.ms(p50), harness.ms(grep_p50), harness.ratio(p50, grep_p50))
        section.add(f"{figure} p95, {label}", harness.ms(p95), harness.ms(grep_p50), harness.ratio(p95, grep_p50))
        return p50

    again = row(
        f"warm, a name asked before ({files} files)", [_time(finder, name) for _ in range(WARM_RUNS) for name in names]
    )
    fresh = _fresh_names(root, code, set(names), 10 if quick else 60)
    for common in ("self", "import", "return", "const", "def", "function", "func", "fn"):
        finder.find(common)  # reads and parses nearly every file, as a session's first questions would
    new = row(f"warm, a name not asked before ({len(fresh)} names)", [_time(finder, name) for name in fresh])
    section.target(
        f"warm p50 < 50 ms ({label})",
        max(again, new) < 0.05,
        f"{harness.ms(again)} for a name asked before, {harness.ms(new)} for a new one",
    )
    paths = [(name, where) for name, where in PATHS[label] if (root / where).is_file()]
    if paths:
        row("warm with path= (imports followed)", [_time(finder, n, w) for _ in range(WARM_RUNS) for n, w in paths])
    cold = float(
        subprocess.run(
            [sys.executable, "-c", COLD, str(root), names[0]], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    )
    grep_once = _grep_time(root, names[0])
    section.add(
        f"cold first call of a new process, {label}",
        harness.ms(cold),
        harness.ms(grep_once),
        harness.ratio(cold, grep_once),
    )


def _time(finder: ReferenceFinder, name: str, path: str | None = None) -> float:
    start = time.perf_counter()
    finder.find(name, path=path)
    return time.perf_counter() - start


def collect(tmp: Path, quick: bool) -> Section:
    del tmp
    section = Section("llmem-mcp")
    section.notes.append("baseline of recall: grep -nw over the same code files; of latency: grep -rnw over the tree")
    trees = {"this repository": ROOT}
    servers = _servers_path()
    if (servers / "src").is_dir():
        trees = {"servers": servers, **trees}
    else:
        section.notes.append(f"servers: skipped ({servers} is not a checkout of modelcontextprotocol/servers)")
    for label, root in trees.items():
        names = NAMES[label][:3] if quick else NAMES[label]
        section.stage(label, lambda label=label, root=root, names=names: _tree(section, label, root, names, quick))
    return section


def main() -> None:
    harness.script_main(
        "llmem-mcp find_references",
        __doc__,
        collect,
        add_args=lambda p: p.add_argument("--servers", type=Path, default=SERVERS, help="a servers checkout"),
    )


if __name__ == "__main__":
    main()
