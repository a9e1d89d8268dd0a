"""Staleness that matches what changed: per-symbol hashes, outlines made again on read, notes
stale only for the symbols that changed, folder summaries that name their changed files, and a
symbol's exact current source."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from llmem.code.artifacts import Llmem
from llmem.code.outline import build_outline, symbol_hashes
from llmem.core.config import Limits
from llmem.core.errors import ArtifactNotFound, InvalidArgument
from llmem.core.store import ArtifactStore

MODULE = '''"""Shapes."""

import math

# The radius is in metres.
def area(radius: float) -> float:
    """Area of a circle."""
    # pi r squared
    return math.pi * radius**2


class Square:
    def __init__(self, side: float) -> None:
        self.side = side

    def area(self) -> float:
        return self.side**2

    def perimeter(self) -> float:
        return 4 * self.side
'''

TS = """// Paths.
import { resolve } from "path";

/** Is the path inside the root? */
export function isInside(root: string, p: string): boolean {
  // normalise first
  const full = resolve(p);
  return full.startsWith(resolve(root));
}

export class Guard {
  constructor(private root: string) {}
  check(p: string): void {
    if (!isInside(this.root, p)) throw new Error("outside");
  }
}
"""


@pytest.fixture
def llmem(workspace: Path) -> Llmem:
    (workspace / "shapes.py").write_text(MODULE, encoding="utf-8")
    (workspace / "paths.ts").write_text(TS, encoding="utf-8")
    svc = Llmem(ArtifactStore(workspace / ".llmem", workspace), Limits())
    svc.parse(".")
    return svc


def _annotate(llmem: Llmem, path: str, names: list[str]) -> None:
    prompt = llmem.prompt(path, "annotate")
    assert prompt.callbackArgs is not None
    answer = {"symbols": {n: {"description": f"about {n}"} for n in names}}
    llmem.store_result(**prompt.callbackArgs, result=json.dumps(answer), model="t")


def _summarize(llmem: Llmem, path: str) -> None:
    prompt = llmem.prompt(path, "summarize")
    assert prompt.callbackArgs is not None
    llmem.store_result(**prompt.callbackArgs, result=f"Summary of {path}.", model="t")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.mark.parametrize(
    ("path", "source"),
    [("shapes.py", MODULE), ("paths.ts", TS)],
)
def test_comment_edits_keep_every_symbol_hash_and_code_edits_change_only_theirs(path: str, source: str) -> None:
    before = symbol_hashes(build_outline(path, source.encode()))
    assert before and all(len(h) == 16 for h in before.values())
    commented = source.replace("\n", "\n// a new comment line\n", 1) if path.endswith(".ts") else source
    if path.endswith(".py"):
        commented = source.replace("# The radius is in metres.", "# The radius, in metres, always.\n# Two lines now.")
        commented = commented.replace("# pi r squared", "# pi times r squared")
    assert symbol_hashes(build_outline(path, commented.encode())) == before
    changed = source.replace("return 4 * self.side", "return 4.0 * self.side").replace(
        'throw new Error("outside")', 'throw new Error("outside the root")'
    )
    after = symbol_hashes(build_outline(path, changed.encode()))
    moved = {k for k in before if before[k] != after.get(k)}
    assert moved == ({"Square", "Square.perimeter"} if path.endswith(".py") else {"Guard", "Guard.check"})


def test_a_comment_only_edit_above_a_symbol_leaves_its_notes_fresh(llmem: Llmem, workspace: Path) -> None:
    _annotate(llmem, "shapes.py", ["area", "Square.area"])
    _summarize(llmem, "shapes.py")
    _edit(workspace / "shapes.py", "# The radius is in metres.", "# The radius is in metres (SI).\n# Really.")
    for kind in ("annotate", "summarize"):
        got = llmem.get("shapes.py", kind, 0, None)
        assert got["status"] == "fresh", kind
        assert "stale_symbols" not in got


def test_a_change_inside_a_function_names_it_and_keeps_the_other_notes(llmem: Llmem, workspace: Path) -> None:
    _annotate(llmem, "shapes.py", ["area", "Square.area", "Square.perimeter"])
    _summarize(llmem, "shapes.py")
    _edit(workspace / "shapes.py", "return 4 * self.side", "return self.side * 4")
    notes = llmem.get("shapes.py", "annotate", 0, None)
    assert notes["status"] == "stale"
    assert notes["stale_symbols"] == [{"symbol": "Square.perimeter", "change": "changed"}]
    assert set(notes["content"]["symbols"]) == {"area", "Square.area"}
    assert set(notes["content"]["changed_symbols"]) == {"Square.perimeter"}
    summary = llmem.get("shapes.py", "summarize", 0, None)
    assert summary["status"] == "stale"
    assert {"symbol": "Square.perimeter", "change": "changed"} in summary["stale_symbols"]
    assert summary["content"] == "Summary of shapes.py."


def test_a_removed_function_is_listed_as_gone(llmem: Llmem, workspace: Path) -> None:
    _annotate(llmem, "shapes.py", ["area", "Square.perimeter"])
    _edit(workspace / "shapes.py", "    def perimeter(self) -> float:\n        return 4 * self.side\n", "")
    notes = llmem.get("shapes.py", "annotate", 0, None)
    assert notes["status"] == "stale"
    assert notes["stale_symbols"] == [{"symbol": "Square.perimeter", "change": "gone"}]
    assert set(notes["content"]["gone_symbols"]) == {"Square.perimeter"}
    assert set(notes["content"]["symbols"]) == {"area"}


def test_a_new_symbol_leaves_notes_fresh_but_is_listed_undescribed(llmem: Llmem, workspace: Path) -> None:
    _annotate(llmem, "shapes.py", ["area"])
    with (workspace / "shapes.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef volume(r: float) -> float:\n    return r**3\n")
    notes = llmem.get("shapes.py", "annotate", 0, None)
    assert notes["status"] == "fresh"
    _summarize(llmem, "shapes.py")
    with (workspace / "shapes.py").open("a", encoding="utf-8") as handle:
        handle.write("\n\ndef mass(r: float) -> float:\n    return r\n")
    summary = llmem.get("shapes.py", "summarize", 0, None)
    assert summary["status"] == "stale" and summary["new_symbols"] == ["mass"]


def test_a_folder_summary_names_the_files_that_changed(llmem: Llmem, workspace: Path) -> None:
    _summarize(llmem, ".")
    assert llmem.get(".", "summarize", 0, None)["status"] == "fresh"
    _edit(workspace / "paths.ts", "outside", "not inside")
    (workspace / "extra.py").write_text("X = 1\n", encoding="utf-8")
    got = llmem.get(".", "summarize", 0, None)
    assert got["status"] == "stale"
    assert got["changed_files"] == {"changed": ["paths.ts"], "added": ["extra.py"], "removed": []}


def test_source_of_one_symbol_is_its_exact_current_lines(llmem: Llmem, workspace: Path) -> None:
    got = llmem.get("shapes.py", "source", 0, None, symbol="Square.perimeter")
    lines = MODULE.splitlines(keepends=True)
    assert got["content"] == "".join(lines[got["start_line"] - 1 : got["end_line"]])
    assert got["content"].strip().startswith("def perimeter") and got["symbol_kind"] == "method"
    assert got["hash"] and got["next_offset"] is None
    _edit(workspace / "shapes.py", "return 4 * self.side", "return 4 * self.side  # edited")
    again = llmem.get("shapes.py", "source", 0, None, symbol="perimeter")  # a unique plain name works too
    assert "# edited" in again["content"]
    ts = llmem.get("paths.ts", "source", 0, None, symbol="Guard.check")
    assert ts["content"].lstrip().startswith("check(p: string)")
    whole = llmem.get("paths.ts", "source", 0, None)
    assert whole["content"] == TS and whole["total_chars"] == len(TS)


def test_source_symbol_errors_name_the_candidates(llmem: Llmem, workspace: Path) -> None:
    (workspace / "two.py").write_text("class A:\n    def run(self): ...\n\n\nclass B:\n    def run(self): ...\n")
    with pytest.raises(InvalidArgument) as ambiguous:
        llmem.get("two.py", "source", 0, None, symbol="run")
    assert {c["symbol"] for c in ambiguous.value.details["candidates"]} == {"A.run", "B.run"}
    # A qualified name that is also another symbol's plain name means the qualified one.
    assert llmem.get("shapes.py", "source", 0, None, symbol="area")["symbol_kind"] == "function"
    with pytest.raises(ArtifactNotFound) as missing:
        llmem.get("shapes.py", "source", 0, None, symbol="Square.perimetre")
    assert "Square.perimeter" in missing.value.details["close_matches"]
    # The outline takes a symbol too (its entry alone); the notes do not.
    assert llmem.get("shapes.py", "outline", 0, None, symbol="area")["content"]["symbol"] == "area"
    with pytest.raises(InvalidArgument):
        llmem.get("shapes.py", "annotate", 0, None, symbol="area")


def test_long_source_comes_in_pages_that_join_exactly(llmem: Llmem, workspace: Path) -> None:
    body = "".join(f'def f{i}(x):\n    """Doc "{i}".\\n"""\n    return x + {i}\n\n' for i in range(1500))
    text = "class Big:\n" + "".join("    " + line + "\n" if line else "\n" for line in body.splitlines())
    (workspace / "big.py").write_text(text, encoding="utf-8")
    pages: list[str] = []
    offset: int | None = 0
    while offset is not None:
        got = llmem.get("big.py", "source", offset, None, symbol="Big")
        assert len(json.dumps(got, ensure_ascii=False)) <= llmem.limits.answer_chars
        pages.append(got["content"])
        offset = got["next_offset"]
    assert len(pages) > 2 and "".join(pages) == text.rstrip("\n") + "\n"
