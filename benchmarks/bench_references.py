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

``check_references`` on each tree (the stage ``check``):

- time of the first check of a new finder (the walk, every file read and bound, every use
  judged), of the same question again (answered from memory while no file changed), and of a
  check once one file was edited (that file bound again, every use judged again), each beside a bare parse
  pass over the same files in the same process (``ast.parse`` for Python, tree-sitter's parse
  for TypeScript/JavaScript/Go); findings on the tree as it is (each is listed in the notes: read
  them — on a clean checkout each one is a false alarm or a real broken reference) and the uses
  not judged;
- half-done renames: definitions picked by a hash (top-level Python functions and classes and
  the methods of top-level classes, but pytest fixtures, exported TypeScript functions, classes, consts and enums) renamed at their definition line
  only, one at a time in a copy of the tree; a rename counts as found when a finding names the
  old name, and every line a finding or its ``uses`` names must be a line ``grep -w`` finds
  (findings elsewhere are counted, 0 expected).

Callers of callers (the stage ``callers``): ``find_references(…, depth=2, tests='exclude')`` for
``normalizePath`` (filesystem server) and ``get_zoneinfo`` (time server) of the servers tree,
against lists made by reading the code with grep (:data:`HAND_CHECKED`): the recall of the
(path, line) of every caller at depth 1 and 2.
"""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

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
#: Callers to depth 2 of two functions of modelcontextprotocol/servers @ 76d64c8, tests left out,
#: made by reading the code (grep -n of each name, then of the function each call lies in):
#: (path, line) of each call, level 1 then level 2.
HAND_CHECKED = {
    ("normalizePath", "src/filesystem/path-utils.ts"): (
        # resolveRelativePathAgainstAllowedDirectories; validatePath (3 calls); allowedDirectories'
        # arrow in args.map (2); parseRootUri
        {("src/filesystem/lib.ts", n) for n in (85, 105, 117, 129)}
        | {("src/filesystem/index.ts", 49), ("src/filesystem/index.ts", 54), ("src/filesystem/roots-utils.ts", 21)},
        # validatePath ← resolveRelative…; every caller of validatePath (index.ts: readTextFileHandler,
        # ten registerTool handlers, directory_tree's buildTree; lib.ts: searchFilesWithValidation's
        # search); parseRootUri ← getValidRootDirectories
        {("src/filesystem/lib.ts", 103), ("src/filesystem/lib.ts", 390), ("src/filesystem/roots-utils.ts", 58)}
        | {("src/filesystem/index.ts", n) for n in (192, 280, 340, 373, 403, 428, 454, 483, 570, 632, 633, 663, 689)},
    ),
    ("get_zoneinfo", "src/time/src/mcp_server_time/server.py"): (
        # TimeServer.get_current_time; TimeServer.convert_time (2 calls)
        {("src/time/src/mcp_server_time/server.py", n) for n in (63, 77, 78)},
        # time_server.get_current_time(…) and time_server.convert_time(…) in serve.call_tool
        {("src/time/src/mcp_server_time/server.py", n) for n in (194, 203)},
    ),
}
RENAMES = 40
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


def _bare_parse(root: Path, keys: list[str]) -> float:
    """A bare parse of the files check_references reads: ast.parse, tree-sitter's parse."""
    import ast

    from llmem.code.outline.treesitter import parser_for

    datas = [(language_of(k), (root / k).read_bytes()) for k in keys]
    start = time.perf_counter()
    for lang, data in datas:
        if lang == "python":
            try:
                ast.parse(data)
            except (SyntaxError, ValueError):
                pass
        else:
            parser_for(lang).parse(data)
    return time.perf_counter() - start


def _check(section: Section, label: str, root: Path) -> None:
    from llmem.code.check_answer import check_answer
    from llmem.code.outline.treesitter import parser_for

    for lang in ("typescript", "tsx", "javascript", "go"):
        parser_for(lang)  # the grammars a running server has loaded already (its first parse)
    finder = ReferenceFinder(root)
    start = time.perf_counter()
    with finder.lock:
        first = check_answer(finder, None, 500, None, 10_000_000)
    cold = time.perf_counter() - start
    start = time.perf_counter()
    with finder.lock:
        check_answer(finder, None, 500, None, 10_000_000)
    warm = time.perf_counter() - start
    checked = [k for k in finder.src.paths() if language_of(k) in ("python", "typescript", "tsx", "javascript", "go")]
    bare = _bare_parse(root, checked)
    files = first["files_checked"]
    section.add(f"check_references, first call ({files} files), {label}", harness.ms(cold), harness.ms(bare),
                harness.ratio(cold, bare))  # fmt: skip
    section.add(f"check_references, the same again (answered from memory), {label}", harness.ms(warm),
                harness.ms(bare), harness.ratio(warm, bare))  # fmt: skip
    section.add(f"check_references findings on the tree as it is, {label}", str(first["total"]), "-", "-")
    section.add(f"uses not judged (not_checked), {label}", str(first["not_checked"]["total"]), "-", "-")
    arity = first["by_kind"].get("call-arguments", 0)
    section.add(f"of the findings, calls whose arguments do not fit (call-arguments), {label}", str(arity), "-", "-")
    for r in first["results"][:20]:
        section.notes.append(f"finding ({label}): {r['path']}:{r['line']} {r['name']} — {r['why']}")
    section.notes.append(
        f"baseline of check_references ({label}): a bare ast.parse / tree-sitter parse of the same files"
    )


def _definitions(root: Path) -> list[tuple[str, str, int]]:
    """(path, name, line) of top-level Python functions and classes and exported TypeScript ones."""
    import ast

    out: list[tuple[str, str, int]] = []
    finder = ReferenceFinder(root)
    for key in finder.src.paths():
        lang = language_of(key)
        text = (root / key).read_text("utf-8", "replace")
        if lang == "python":
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            # methods too: their calls through self are judged
            methods = [m for c in tree.body if isinstance(c, ast.ClassDef) for m in c.body]
            out += [
                (key, n.name, n.lineno)
                for n in [*tree.body, *methods]
                if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                and not n.name.startswith("__")
                # a pytest fixture is used by parameter name, which no resolver follows
                and not any("fixture" in ast.unparse(d) for d in n.decorator_list)
            ]
        elif lang in ("typescript", "tsx", "javascript"):
            for m in re.finditer(r"^export (?:async )?(?:function|class|const|enum) (\w+)", text, re.MULTILINE):
                out.append((key, m.group(1), text.count("\n", 0, m.start()) + 1))
    return sorted(out, key=lambda d: hashlib.blake2b(f"{d[0]}:{d[1]}".encode(), digest_size=8).digest())


def _renames(section: Section, label: str, root: Path, tmp: Path, quick: bool) -> None:
    """Half-done renames, one at a time in a copy: found, and findings only on lines grep finds."""
    from llmem.code.check import check_files

    copy = tmp / f"renames-{label.replace(' ', '-')}"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, ignore=shutil.ignore_patterns(".git", ".venv", "node_modules", ".llmem", "__pycache__"))
    finder = ReferenceFinder(copy)

    def findings() -> list[Any]:
        files = {k: f for k in finder.src.paths() if (f := finder.src.file(k)) is not None}
        return check_files(finder.src, files, sorted(files)).findings

    tried = found = stray = 0
    missed: list[str] = []
    after_edit: list[float] = []
    code = [k for k in finder.src.paths() if language_of(k) in CODE_LANGUAGES]
    for key, name, line in _definitions(copy):
        if tried >= (8 if quick else RENAMES):
            break
        grep = _grep_lines(copy, name, code) - {(key, line)}
        if not grep:
            continue  # nothing uses it: nothing to break
        tried += 1
        file = copy / key
        original = file.read_text("utf-8")
        lines = original.splitlines(keepends=True)
        lines[line - 1] = re.sub(rf"\b{re.escape(name)}\b", name + "Renamed", lines[line - 1], count=1)
        file.write_text("".join(lines), encoding="utf-8")
        try:
            start = time.perf_counter()
            every = findings()
            after_edit.append(time.perf_counter() - start)
            mine = [f for f in every if f.missing == name]
        finally:
            file.write_text(original, encoding="utf-8")
        places = {(f.path, f.line) for f in mine} | {(f.path, u) for f in mine for u in f.uses}
        found += bool(mine)
        stray += len(places - grep)
        if not mine:
            missed.append(f"{key}:{line} {name}")
    if after_edit:
        p50, _ = harness.percentiles(after_edit)
        bare = _bare_parse(copy, [k for k in finder.src.paths() if language_of(k) in CODE_LANGUAGES])
        section.add(f"check_references after one file edited, p50 of {len(after_edit)}, {label}", harness.ms(p50),
                    harness.ms(bare), harness.ratio(p50, bare))  # fmt: skip
    share = found / tried if tried else 1.0
    section.add(f"half-done renames found ({tried} renamed one at a time), {label}", f"{share:.3f}", "1.000", "-")
    section.add(f"finding lines grep -w does not find, {label}", str(stray), "0", "-")
    if missed:
        section.notes.append(f"renames not found ({label}): " + "; ".join(missed[:8]))


def _callers(section: Section, root: Path) -> None:
    from llmem.code.references_callers import caller_tree

    finder = ReferenceFinder(root)
    for (symbol, path), levels in HAND_CHECKED.items():
        with finder.lock:
            tree = caller_tree(finder, symbol, path, 2, "exclude", 500, None, 10_000_000)
        got: list[set[tuple[str, int]]] = [set(), set()]
        for node in tree["callers"]:
            got[0] |= {(node["path"], n) for n in node["lines"]}
            for up in node.get("callers", []):
                got[1] |= {(up["path"], n) for n in up["lines"]}
        for depth, (want, have) in enumerate(zip(levels, got, strict=True), 1):
            recall = len(want & have) / len(want)
            section.add(f"callers at depth {depth} of {symbol} vs a hand-checked list ({len(want)})", f"{recall:.3f}",
                        "1.000", "-")  # fmt: skip
            extra = sorted(have - want)
            if extra or want - have:
                section.notes.append(
                    f"{symbol} depth {depth}: missed {sorted(want - have)[:5]}, beyond the list {extra[:5]}"
                )


def collect(tmp: Path, quick: bool) -> Section:
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
    for label, root in trees.items():
        section.stage(f"check {label}", lambda label=label, root=root: _check(section, label, root))
        section.stage(f"renames {label}", lambda label=label, root=root: _renames(section, label, root, tmp, quick))
    if "servers" in trees:
        section.stage("callers", lambda: _callers(section, trees["servers"]))
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
