"""How a notes search reads its words, and says why a hit matched.

The words of docs, notes and summaries are indexed by FTS5's ``porter`` tokenizer over
``unicode61`` (:mod:`llmem.code.index_db`), so ``calls``, ``called`` and ``calling`` are one
word. A question's grammar words (``who``, ``does``, ``the``…) are dropped; each remaining word
also matches its root and agent nouns, which the Porter stemmer keeps apart (``calls`` ↔
``callers``, ``parsing`` ↔ ``parser``). A hit holds every word in one of its forms; with three words or more,
one holding all but one of them comes after those, saying which it lacks. Hits are ranked by
bm25; each says which of its words matched (:func:`matched_words`).
"""

from __future__ import annotations

import functools
import re
import sqlite3
import threading

from llmem.code.index_db import split_words

__all__ = ["MARK_END", "MARK_START", "QueryTerms", "matched_words"]

#: What ``highlight()`` puts around a matched word (control characters: never in indexed words).
MARK_START = "\x01"
MARK_END = "\x02"

_TOKEN = re.compile(r"[A-Za-z_$][\w$]*|[0-9]+")
#: Words of a question that say nothing about the code.
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "who",
        "whom",
        "whose",
        "what",
        "which",
        "where",
        "when",
        "why",
        "how",
        "does",
        "do",
        "did",
        "doing",
        "done",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "being",
        "am",
        "of",
        "to",
        "in",
        "on",
        "at",
        "by",
        "for",
        "with",
        "from",
        "into",
        "onto",
        "about",
        "as",
        "and",
        "or",
        "nor",
        "but",
        "if",
        "then",
        "than",
        "so",
        "that",
        "this",
        "these",
        "those",
        "there",
        "here",
        "it",
        "its",
        "it's",
        "they",
        "them",
        "their",
        "we",
        "our",
        "you",
        "your",
        "i",
        "me",
        "my",
        "he",
        "she",
        "his",
        "her",
        "any",
        "some",
        "each",
        "every",
        "all",
        "can",
        "could",
        "should",
        "would",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "has",
        "have",
        "had",
        "having",
        "not",
        "no",
        "yes",
        "also",
        "just",
        "only",
        "very",
    ]
)


#: Endings taken off a word to find the verb or noun it is made from, and the least left after.
_ENDINGS = (("ers", 3), ("ors", 4), ("er", 3), ("or", 4), ("ing", 3), ("ed", 3), ("es", 3), ("s", 3))


def _forms(word: str) -> list[str]:
    """The word and the forms of the same root Porter does not join to it: the root (``calling``
    → ``call``, ``parsing`` → ``parse``, ``editor`` → ``edit``) and its agent noun (``caller``, ``parser``)."""
    if not word.isalpha() or len(word) < 3:
        return [word]  # a number, a letter
    root = word
    for ending, least in _ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= least and not word.endswith("ss"):
            root = word[: -len(ending)]
            break
    roots = [root] if root == word else [root, root + "e"]
    nouns = [r + "r" if r.endswith("e") else r + "er" for r in roots]
    return list(dict.fromkeys([word, *roots, *nouns]))


_STEMMER_LOCK = threading.Lock()


@functools.cache
def _stemmer() -> sqlite3.Connection:
    conn = sqlite3.connect(":memory:", check_same_thread=False)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(w, tokenize='porter unicode61')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance')")
    return conn


@functools.lru_cache(maxsize=4096)
def stem(word: str) -> str:
    """The word as the index keeps it: what FTS5's porter tokenizer makes of it (asked of SQLite
    itself, so the two never disagree)."""
    with _STEMMER_LOCK:
        conn = _stemmer()
        conn.execute("INSERT INTO t(rowid, w) VALUES (1, ?)", (word,))
        found = conn.execute("SELECT term FROM v").fetchone()
        conn.execute("DELETE FROM t")
    return str(found[0]) if found else word


def _group(word: str) -> str:
    # One form per word the index keeps: forms the stemmer joins anyway cost a second scan.
    forms = list({stem(f): f for f in reversed(_forms(word))}.values())[::-1]
    quoted = " OR ".join(f'"{f}"' for f in forms)
    return f"({quoted})" if len(forms) > 1 else quoted


def _all(parts: list[str]) -> str:
    groups = list(dict.fromkeys(_group(p) for p in parts))
    return groups[0] if len(groups) == 1 else "(" + " AND ".join(groups) + ")"


class QueryTerms:
    """The words of one notes query and their FTS5 match expressions."""

    def __init__(self, query: str) -> None:
        # The query's words as written (``normalizePath`` is one word of two parts, both required).
        written = list(dict.fromkeys(t for t in _TOKEN.findall(query) if split_words(t)))
        kept = [w for w in written if w.lower() not in STOP_WORDS]
        self.words: list[str] = kept or written
        self.groups = [_all(split_words(w)) for w in self.words]

    def __bool__(self) -> bool:
        return bool(self.words)

    def every(self) -> str:
        """Every word, in one of its forms."""
        return " AND ".join(self.groups)

    def any(self) -> str:
        return " OR ".join(self.groups)

    def all_but_one(self) -> list[tuple[str, str]]:
        """With three words or more, ``(the word left out, the others)`` for each word."""
        if len(self.words) < 3:
            return []
        return [(w, " AND ".join(g for j, g in enumerate(self.groups) if j != i)) for i, w in enumerate(self.words)]


_MARKED = re.compile(re.escape(MARK_START) + "(.*?)" + re.escape(MARK_END))


def matched_words(highlighted: str, text: str, limit: int = 8) -> list[str]:
    """The words of ``text`` (as written: ``normalizePath``, ``callers``) that hold a word
    ``highlight()`` marked in the indexed form of the text."""
    marked = {m.group(1) for m in _MARKED.finditer(highlighted)}
    if not marked:
        return []
    out: dict[str, None] = {}
    for token in _TOKEN.findall(text):
        if token not in out and marked & set(split_words(token)):
            out[token] = None
            if len(out) >= limit:
                break
    return list(out)
