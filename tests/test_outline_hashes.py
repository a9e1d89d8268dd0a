"""Per-symbol hashes (contract C1): comment edits change nothing, a code change moves only the
hashes of the symbols that hold it, and overloads get one hash whatever their order."""

from __future__ import annotations

import hashlib
import textwrap

from llmem.code.outline import build_outline, hashes_of_symbol_dicts, iter_symbols, symbol_hashes

PY = textwrap.dedent(
    """\
    import os


    # Where the cache lives.
    def cache_dir(base: str) -> str:
        # expand the user's home first
        path = os.path.expanduser(base)  # "~" too
        return os.path.join(path, "#cache")


    class Store:
        \"\"\"Keeps things.\"\"\"

        def get(self, key):
            if key:
                value = self.load(key)
                return value
            return None

        def load(self, key):
            return key
    """
)

TS = textwrap.dedent(
    """\
    /** A guard. */
    export class Guard {
      /**
       * Throws outside the root.
       */
      check(path: string): void {
        // a comment inside
        if (!path.startsWith("/root")) { // trailing
          throw new Error("outside: http://example.com"); /* why */
        }
      }

      other(): number {
        return 1;
      }
    }

    export function overload(x: string): string;
    export function overload(x: number): number;
    export function overload(x: any): any {
      return x;
    }
    """
)


def _hashes(path: str, text: str) -> dict[str, str]:
    return symbol_hashes(build_outline(path, text.encode()))


def test_every_symbol_has_sixteen_hex_digits_of_sha256_over_its_code_lines() -> None:
    outline = build_outline("store.py", PY.encode())
    load = next(s for s in iter_symbols(outline) if s.qualified_name == "Store.load")
    code = b"    def load(self, key):\n        return key"
    assert load.hash == hashlib.sha256(code).hexdigest()[:16]
    assert all(s.hash is not None and len(s.hash) == 16 for s in iter_symbols(outline))


def test_comment_edits_above_inside_and_after_code_keep_every_hash() -> None:
    before = _hashes("store.py", PY)
    edited = (
        PY.replace("# Where the cache lives.", "# Where the cache lives, always.\n# Two lines now.")
        .replace("# expand the user's home first", "# expand ~ first\n\n        # and more")
        .replace('# "~" too', "# tilde")
        .replace("        def load", "        # loads\n        def load")
    )
    assert _hashes("store.py", edited) == before
    before_ts = _hashes("guard.ts", TS)
    edited_ts = (
        TS.replace("// a comment inside", "// another comment")
        .replace("// trailing", "// trailing, edited")
        .replace("/* why */", "/* because */")
        .replace("Throws outside the root.", "Throws when the path is outside the root.\n   * More.")
    )
    assert _hashes("guard.ts", edited_ts) == before_ts


def test_a_code_change_moves_only_the_symbol_that_holds_it_and_its_parents() -> None:
    before = _hashes("store.py", PY)
    after = _hashes("store.py", PY.replace("value = self.load(key)", "value = self.load(key.strip())"))
    assert {k for k in before if before[k] != after[k]} == {"Store", "Store.get"}
    before_ts = _hashes("guard.ts", TS)
    after_ts = _hashes("guard.ts", TS.replace('"/root"', '"/srv"'))
    assert {k for k in before_ts if before_ts[k] != after_ts[k]} == {"Guard", "Guard.check"}


def test_indentation_is_code_in_python() -> None:
    before = _hashes("store.py", PY)
    assert "            return value\n" in PY
    dedented = PY.replace("            return value\n", "        return value\n")  # out of the if
    assert _hashes("store.py", dedented)["Store.get"] != before["Store.get"]


def test_a_hash_inside_a_string_is_not_a_comment() -> None:
    before = _hashes("store.py", PY)
    after = _hashes("store.py", PY.replace('"#cache"', '"#store"'))
    assert after["cache_dir"] != before["cache_dir"]
    ts_before = _hashes("guard.ts", TS)
    ts_after = _hashes("guard.ts", TS.replace("http://example.com", "http://example.org"))
    assert ts_after["Guard.check"] != ts_before["Guard.check"]


def test_overloads_share_one_hash_whatever_the_order_and_stored_outlines_agree() -> None:
    outline = build_outline("guard.ts", TS.encode())
    hashes = symbol_hashes(outline)
    assert [s.qualified_name for s in outline.symbols].count("overload") == 3
    stored = outline.model_dump()["symbols"]
    assert hashes_of_symbol_dicts(stored) == hashes
    assert hashes_of_symbol_dicts(list(reversed(stored))) == hashes


def test_manifests_and_markdown_have_hashes_too() -> None:
    readme = "# Title\n\nIntro.\n\n## Usage\n\nRun it.\n"
    before = _hashes("README.md", readme)
    after = _hashes("README.md", readme.replace("Run it.", "Run it twice."))
    assert before["Title"] != after["Title"] and before["Title.Usage"] != after["Title.Usage"]
    pyproject = '[project]\nname = "x"\ndependencies = [\n  "a>=1",  # why\n]\n'
    assert _hashes("pyproject.toml", pyproject) == _hashes("pyproject.toml", pyproject.replace("# why", "# because"))
