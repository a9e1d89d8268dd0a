"""What it costs a note to know the code it names (issue 23 §3), on real trees, each figure beside
its baseline in the same run.

    python benchmarks/bench_note_deps.py [--quick]

Trees: ``tests/data/servers`` (the modelcontextprotocol/servers files the tests use) and this
repository's ``llmem`` and ``debrief_calc`` packages, copied to a temporary folder and outlined.
A file summary naming ten symbols defined once in other files of the tree (in backticks) is
stored and read beside a summary of another file that names none:

- ``store_llm_result``: the names resolved through ``find_references``' resolver (one pass over
  the files, the files holding a name parsed) and recorded with their outline hashes, beside the
  same store of a summary naming nothing (the first store of the process, files not yet read,
  and the p50 of the next ones);
- ``get_artifact``: the dependencies checked (a ``stat`` of each file they are in) beside the read
  of the summary without any;
- the same read once a file it names changed elsewhere than in the named symbol (that file's
  outline made again, once per process, then kept while the file stays as it is).
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import _harness as harness
from _harness import Section, ms, percentiles, ratio

from llmem.code.artifacts import Llmem
from llmem.code.references import ReferenceFinder, finder_for
from llmem.core.config import Limits
from llmem.core.store import ArtifactStore

ROOT = Path(__file__).resolve().parents[1]
TREES = {
    "servers": (ROOT / "tests" / "data" / "servers", ["src"]),
    "this repository": (ROOT, ["llmem", "debrief_calc"]),
}
NAMED = 10


def _store(llmem: Llmem, path: str, text: str) -> float:
    out = llmem.prompt(path, "summarize")
    assert out.callbackArgs is not None
    start = time.perf_counter()
    stored = llmem.store_result(**out.callbackArgs, result=text, model="bench")
    took = time.perf_counter() - start
    assert stored.status == "success", stored
    return took


def _reads(llmem: Llmem, path: str, rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        llmem.get(path, "summarize", 0, None)
        out.append(time.perf_counter() - start)
    return out


def _names(llmem: Llmem, own: str) -> list[tuple[str, str]]:
    """(name, file) of functions and classes defined once in the tree, outside ``own``, spread over files."""
    candidates: dict[str, str] = {}
    for key, kinds in llmem.store.iter_keys("llmem"):
        if "outline" not in kinds or key == own:
            continue
        record = llmem.store.get_or_none("llmem", key, "outline")
        content = record.doc.get("content") if record is not None else None
        for sym in content.get("symbols", []) if isinstance(content, dict) else []:
            name = str(sym.get("name") or "")
            if sym.get("kind") in ("function", "class") and len(name) > 6 and not name.startswith("_"):
                candidates.setdefault(name, key)
                break  # one per file
    defs = ReferenceFinder(llmem.ws).definitions_of(candidates)  # not the process's finder: that one stays cold
    once = [(n, p) for n, p in candidates.items() if len({d["path"] for d in defs.get(n, [])}) == 1]
    return once[:NAMED]


def _tree(section: Section, label: str, source: Path, parts: list[str], tmp: Path, quick: bool) -> None:
    ws = tmp / label.replace(" ", "_")
    for part in parts:
        shutil.copytree(source / part, ws / part, ignore=shutil.ignore_patterns("__pycache__", ".llmem"))
    llmem = Llmem(ArtifactStore(ws / ".llmem", ws), Limits())
    llmem.parse(".")
    files = sorted(k for k, kinds in llmem.store.iter_keys("llmem") if "outline" in kinds)
    naming, plain = files[0], files[1]
    names = _names(llmem, naming)
    text = "# Summary\n\nIt works with " + ", ".join(f"`{n}`" for n, _ in names) + "."
    rounds = 5 if quick else 30
    first = _store(llmem, naming, text)  # the first of the process: every file read once
    first_plain = _store(llmem, plain, "# Summary\n\nIt works with nothing named.")
    ours = [_store(llmem, naming, text) for _ in range(rounds)]
    base = [_store(llmem, plain, "# Summary\n\nIt works with nothing named.") for _ in range(rounds)]
    deps = llmem.get(naming, "summarize", 0, None)
    record = llmem.store.get("llmem", naming, "summarize")
    recorded = len(record.doc.get("depends_on") or [])
    files_read = len(finder_for(ws).src.paths())
    section.add(
        f"{label}: store a summary naming {len(names)} symbols ({recorded} recorded; {files_read} files), "
        "first of the process (every file read), vs one naming none",
        ms(first),
        ms(first_plain),
        ratio(first, first_plain),
    )
    (o50, _), (b50, _) = percentiles(ours), percentiles(base)
    section.add(f"{label}: same, p50 of {rounds}", ms(o50), ms(b50), ratio(o50, b50))
    assert deps["status"] == "fresh", deps["status"]
    (r50, _), (p50, _) = percentiles(_reads(llmem, naming, rounds * 3)), percentiles(_reads(llmem, plain, rounds * 3))
    section.add(f"{label}: get_artifact of it, p50, vs the summary naming none", ms(r50), ms(p50), ratio(r50, p50))
    # A file it names changes away from the named symbol: the symbol is compared, the note stays fresh.
    _, changed = names[0]
    with (ws / changed).open("a", encoding="utf-8") as handle:
        handle.write("\n// touched\n" if not changed.endswith(".py") else "\n# touched\n")
    start = time.perf_counter()
    after = llmem.get(naming, "summarize", 0, None)
    once = time.perf_counter() - start
    assert after["status"] == "fresh", after.get("stale_dependencies")
    w50, _ = percentiles(_reads(llmem, naming, rounds * 3))
    section.add(
        f"{label}: first read after {changed} changed elsewhere, vs a read", ms(once), ms(p50), ratio(once, p50)
    )
    section.add(f"{label}: later reads, p50", ms(w50), ms(p50), ratio(w50, p50))


def collect(tmp: Path, quick: bool) -> Section:
    section = Section("llmem-mcp")
    section.notes.append("baseline: the same call on a summary of another file of the tree that names no symbol")
    for label, (source, parts) in TREES.items():
        section.stage(
            label, lambda label=label, source=source, parts=parts: _tree(section, label, source, parts, tmp, quick)
        )
    return section


def main() -> None:
    harness.script_main("llmem-mcp note dependencies", __doc__, collect)


if __name__ == "__main__":
    main()
