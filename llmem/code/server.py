"""``llmem-mcp``: wires the llmem domain functions (``artifacts.py``) to its MCP tools."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver import Context
from mcp_types import ToolAnnotations
from pydantic import Field

from llmem import __version__
from llmem.core.config import ServerConfig
from llmem.core.envelope import Envelope, error_envelope
from llmem.core.errors import SuiteError
from llmem.core.serve import Runtime, SuiteServer, tool_annotations

if TYPE_CHECKING:
    from llmem.code.artifacts import Llmem

__all__ = ["build_server"]

INSTRUCTIONS = (
    "llmem is a code memory for one workspace: parser-made outlines of every file (symbols, manifests, "
    "Markdown headings, tests, registrations) and notes your model writes, kept across sessions and checked "
    "against the code. Look here before grep: search_artifacts finds symbols and notes, find_references "
    "who uses one (depth=2: who calls its callers), check_references what an edit broke, get_artifact with kind='source' shows one symbol's code (kind='outline' with symbol: its outline entry and members). Parse with generate_artifact; notes via generate_prompt, your "
    "model, then store_llm_result."
)

PURPOSE = (
    "For an agent working on a codebase: search symbols by name and notes by their words, read one symbol's "
    "exact current code, outlines of every file (symbols with line ranges and hashes, imports, manifests, "
    "Markdown headings, test blocks, registrations), and notes about files and folders written by your own "
    "model. Notes stay fresh while the code they describe is unchanged; when it changes, the answer names the "
    "stale symbols. Everything lives in the shared artifact store (.llmem/, with its own .gitignore); "
    ".llmemignore (gitignore syntax) keeps paths out."
)

PROTOCOL = (
    "The server never calls a model. generate_prompt answers status 'prompt_ready' with promptForHostLLM, "
    "callbackTool 'store_llm_result' and callbackArgs (ticket, path, task). Run the prompt with your model and "
    "call store_llm_result(**callbackArgs, result=<answer>). A malformed answer comes back as an error that "
    "says what to fix; retry with the same ticket while error.details shows attempts left. A file too big for "
    "one annotate prompt comes in parts (part k of parts): each answer names the next part to ask for; "
    "symbols=['Class.method', 'Class.field', ...] asks for just those symbols (and their members), notes kept: in "
    "the given order, as many as one part holds; symbols_left names the rest and the call that asks for them. "
    "A prompt is never cut: past the size cap only context is left out (prompt_cut says so). A newer prompt "
    "for the same path and task replaces older tickets asking any of the same symbols (superseded_tickets; "
    "still_pending lists the others, still answerable); cancel_prompt drops pending ones. If the file "
    "changed meanwhile the answer is refused with SOURCE_CHANGED: ask for a new prompt. Notes follow their "
    "code: when a parse finds a described symbol renamed with its code unchanged, or moved to another file, "
    "its note moves with it and the parse answer says renamed {path: {old: new}} or moved "
    "{'old_path#old': 'new_path#new'} (get_artifact of the notes repeats them until notes are next written; "
    "while code anywhere still uses an old name it adds rename_unfinished [{old, new, uses, at, list_with}], "
    "and the file's prompts list those uses); "
    "only notes of symbols whose code changed go stale. A move is found when one generate_artifact call "
    "parses both files, or the old file first. generate_prompt(path, 'annotate') (no part) on a stale file asks "
    "only for its stale and new symbols (as many as a part holds; refresh_left: the same call asks the rest "
    "once the answer is stored), keeps the rest and counts the never described "
    "(never_described, never_described_with: the part that asks for them); a gone name in a note's code that "
    "was renamed where it is defined only is shown with the uses still naming it (the rename is unfinished; "
    "get_artifact's stale_dependencies say rename_unfinished); "
    "the note of a method goes stale when the base-class member it overrode goes (overridden_by); folder prompts say what they left out and how to read it "
    "(a subfolder with no summary brings the ranked notes and summaries below it). list_artifacts(status="
    "'stale') ends with how to refresh; a stale summary's get_artifact lists gone_names_mentioned (the "
    "symbols it names that no longer exist) and, for those of them renamed (code the same, or a little "
    "changed: same signature and size), renamed_names_mentioned {old: new}; a gone symbol seen renamed says renamed_to. An annotate answer may describe any symbol the file's outline "
    "lists (any part, fields and variables too); its valid keys are always stored (stored), a key naming "
    "no symbol of the file is refused without spending an attempt, each with its reason and the call that "
    "gets a ticket for it (refused), and a bare name of one symbol is stored under its qualified name "
    "(keys_mapped). A note also depends on the code it names: identifiers in backticks or shaped like code "
    "(validatePath, GitTools.DIFF, run()) that resolve to a definition in another file, or to another "
    "symbol of its own file, are recorded when it is stored (depends_on); when one changes or goes, the "
    "note reads stale with stale_dependencies [{name, path, change, named_in, read_with}] (a function whose "
    "signature changed: signature_was, signature_now) and its refresh prompt shows that code. The refresh "
    "of a function's own note whose signature changed gives signatures_changed: was, now, its uses, the "
    "find_references call that lists them and (Python) calls_not_matching, the calls that no longer fit."
)

USAGES = (
    "find_references(symbol) answers every use of a name across the workspace: each with path, line, column, "
    "the line's text, the function or class it lies in ('in') and its kind: import, call, reference (any other "
    "identifier), parameter (a parameter's or keyword argument's name: memory=True, def f(memory): never a use "
    "of a function), entry-point (pyproject scripts, package.json bin/main, Dockerfile ENTRYPOINT/CMD) or text "
    "(comments, strings, other files), with an exact total and counts by kind; a call spread over lines adds "
    "call (the whole call, its arguments too, clipped). Every line `grep -w` finds is "
    "there, as a use or among 'definitions'. The answer lists the name's definitions; pass one of their paths "
    "as path= to keep only the uses of that definition, followed through imports (Python and TypeScript/"
    "JavaScript; Go, Rust and Java by name in files of the same language). A method or class member's uses "
    "are x.name wherever x may be of its class (resolution 'receivers'): self, x: C, x = C(...), with C(...) as x, "
    "super().name (the first base in MRO order that defines it), "
    "self.x = C(...) are its (TypeScript: x: C, new C(), this; a static member only as C.x, C or an import of it); "
    "a list, a str, a dict (**kwargs), a generator, a module, a global (Object, JSON), another class or interface, "
    "an instance for a static member, and x.name = ... "
    "(an attribute set) are not (left_out); symbol='Client.request' (or 'module.func') keeps one definition "
    "where two classes share the name; 'C.#m', '#m' (or 'm' when only #m exists) is a #private member; an x of unknown type is kept with uncertain: true "
    "and receiver (why), counted in uncertain, listed after the certain uses. With symbol set to a module's own "
    "name (find_references('paths', path='pkg/paths.py')) it answers who imports that file. With path, "
    "left_out counts by reason and by_file what grep -w finds beyond the answer (text mentions in files that "
    "do not import it, other definitions), so totals add up. A CLI command (@cli.command) says entry_point. A name nothing in the workspace defines but imported "
    "from a module of it (what a rename leaves behind) gets a note and unresolved_imports [{path, line, from}]. "
    "'in' is the outline's innermost symbol holding the line (an arrow-function const, a registerTool "
    "handler, a describe/it block), as the line search names it; a use inside an anonymous function adds "
    "it after an arrow: 'allowedDirectories → arrow in args.map', 'f → lambda in sorted(key=)', 'h → onData' "
    "(a local const), 'arrow as handler' (a property). kind='call' and the like filter (by_kind then counts "
    "what total counts; by_kind_all every kind); page with cursor=next_cursor. Uses in code come first, those "
    "in test files after them (test_*.py, *_test.py, conftest.py, *_test.go, *.test.ts / *.spec.ts and .js, "
    "*Test.java, or under tests/, test/, __tests__/, spec/): tests='exclude' leaves them out (tests_left_out "
    "counts them), tests='only' keeps only them; in_tests counts them and by_file counts uses per file. "
    "depth=2..5 answers who calls it as a tree instead: callers [{in, in_kind, path, line, lines, text, "
    "callers: [...]}] grouped by the function they lie in, then the callers of each, to that depth, judged "
    "as path= judges uses (uncertain nodes say why); a node not followed says why in cut (module level, a "
    "registered handler, a test block, a cycle, an uncertain use inside the symbol itself, the depth reached; "
    "the answer's cut counts such nodes); a caller already expanded elsewhere in the answer says see "
    "(where: callers[0].callers[1]) instead of repeating its callers; distinct_callers counts them once. "
    "not_in_tree and left_out count what depth=1 lists beside the calls (text mentions, other definitions). "
    "A CLI command (@cli.command) says "
    "entry_point; reached_from counts the leaves by what they are; only_from_tests marks a function only "
    "tests reach (tests='exclude' leaves tests out at every level: tests_left_out_in_tree). With depth, "
    "tests='only' answers tests_reaching [{in, path, line, calls: test → … → symbol}]: the tests that reach "
    "it at any level (not those calling through a CLI runner or a subprocess). A name nothing defines whose "
    "uses no longer resolve answers unresolved: true, each such "
    "use with unresolved and why, and last_defined {path, line, symbol, renamed_to?} when the store remembers; "
    "so does a Class.member the store saw go (other definitions of the name: other_definitions_of_the_name, a "
    "hint). self.x in a class whose bases lack x, only a subclass has it, is marked unresolved with why; so "
    "is an import of the name from a module that no longer defines it (with path: left out as unresolved), and "
    "x.m where x: A | B and A lost m (x is a use of B's m too). With path, a call whose arguments no longer "
    "fit the signature says arguments_do_not_fit (calls_not_fitting counts them)."
)

CHECK_GUIDE = (
    "check_references(path?) answers what an edit broke: the uses under path (the whole workspace by "
    "default) that no longer resolve to a definition, read from the files as they are on disk (parsed or "
    "not; changed outlines are re-parsed first, so a member gone is known: freshness says what was). Each: path, line, kind (import, re-export, call, reference), name as written (GitTools.DIFF), "
    "missing (DIFF), 'in', why, defined_in (where it was looked for), did_you_mean (first the name the store "
    "knows it was renamed to, then near names), renamed_to and last_defined when the store remembers, and for "
    "a broken import uses {count, lines} (the lines using it: fix them with it). Python: imports, __all__, "
    "bare names (scopes, builtins), attributes of modules, classes, enums, of x: C or x = C() and of self "
    "(class bodies, self.x set in methods, bases in the workspace or the standard library; a self.x no class "
    "sets is reported only when it reads as a rename, and one only a subclass defines when the store saw it go; x.m "
    "where x: A | B and A lacks m while B has it, only when the store saw A.m go; a "
    "module __getattr__ is read for the names it serves); a call it resolves to a def of the workspace whose arguments no "
    "longer fit (a required parameter not given, too many, an unknown keyword) is kind call-arguments, why naming the "
    "signature (decorated or overloaded defs, *args calls, metaclasses: not judged). TypeScript/JavaScript: names imported, "
    "re-exported or import()-ed from relative paths, export {x}, members of enums, classes, namespaces and "
    "import * as ns, members of x where x is an instance of a workspace class as find_references judges it "
    "(new C(), x: C; not when C extends a package class or has an index signature), a name a file declares "
    "but does not export (why says so; the fix is export), and bare names the file does not bind when another file exports them, a very near name "
    "is declared, or the store remembers them (types are not judged; package imports are not followed). Go: "
    "calls of names the package does not declare. What it cannot judge (a value of unknown type, a module "
    "outside the workspace, a base class from a package, getattr, lines marked noqa/type: ignore/"
    "@ts-expect-error, Rust, Java) is counted in not_checked by reason, never reported; but x.name on a value of "
    "unknown type (or of such a C), where name is a class member a parse saw go and no class has now, is listed apart in "
    "may_break_by_name (by_name: true), and a name the store saw go from a module whose __getattr__ cannot be "
    "read, or from a class whose members cannot be (a computed setattr), in known_gone. A setattr over a literal list of names sets those. Code before tests; "
    "exact totals, by_kind, by_file, in_tests; page with cursor=next_cursor."
)

SEARCH_GUIDE = (
    "search_artifacts has five scopes. 'symbols': names of symbols (exact, prefix, camelCase/snake_case "
    "words, substring of the qualified name); a symbol found by name that has a note shows it in note. "
    "A hit's snippet is its own text: a doc hit's the docstring, a note hit's the note. 'notes': docstrings, your model's notes and summaries holding "
    "every word of the query in any of its forms (calls, called, calling, callers; question words such as "
    "who, does, the are ignored), best first by bm25; each hit's why names the field and the words that "
    "matched; when none holds them all, those lacking one of three words or more (why.lacks). 'files': files whose path holds every word of the query (Dockerfile, workflow, "
    ".python-version). 'lines': every line of every text file the walk keeps (code, Dockerfile, YAML, TOML, "
    "shell, Markdown, JSON; .gitignore and .llmemignore apply) that holds the query, ASCII case ignored, as "
    "grep -i would find them, each with its line and the symbol it lies in; lock files (uv.lock, "
    "package-lock.json …) are left out and counted in lock_files_skipped unless directory is the lock file. "
    "'auto' (default): symbols then notes; files when neither matches, then lines, then notes lacking one word; "
    "a name (3+ characters) no symbol is named exactly also gets lines {total, whole_word} (its line matches, counted) and, when "
    "a parse saw it go, gone {name, last_defined, renamed_to, remaining_uses} first. Use 'lines' to find every use "
    "of a name before changing it. get_artifact(path, kind='source') without symbol reads any text file "
    "whole (paged): a README, a Dockerfile, a workflow. Every "
    "answer gives the exact total; page with cursor=next_cursor until it is null (left says how many "
    "remain). kind filters symbols and notes by symbol or artifact kind (kind='code' is scope='lines'). "
    "coverage counts what symbols and notes covered (outlined_files, files_with_notes, not_outlined: "
    "not_outlined_parsable, which a parse outlines (not_outlined_in_hidden_folders: by their path only), and "
    "not_outlined_no_outline by kind, which none does); a note "
    "written before its code changed says note_stale (what changed) and refresh_with; stale_notes counts them."
)

FRESHNESS = (
    "Answers are about the files as they are now, edits made behind the server's back (yours, an editor's, "
    "git's) included: search_artifacts, get_artifact and folder prompts first re-parse the outlined files that "
    "changed since they were outlined, within a time budget (LLMEM_REFRESH_BUDGET_MS, default 1000 ms; a read "
    "about one file always brings that file up to date), and get_artifact outlines a file never parsed. A hit "
    "in a file not re-parsed in time says stale: true and refresh_with (the call that refreshes it); deleted: "
    "true when the file is gone. Each search answer's freshness says how many files it re-parsed (refreshed) "
    "and how many it left stale (stale_files, stale_paths, refresh_with for them all): their new symbols may be "
    "missing. A server just started compares every outlined file once in the background (seconds at most on a "
    "large workspace); until then each answer checks its own hits' files and says not_yet_compared: ask again "
    "in a moment if a new name is missing. A parse answer lists in refreshed_since the files a read already re-parsed since the last parse "
    "(path, when, by): those count as unchanged there. find_references reads the files themselves on every call."
)

Path_ = str  # workspace-relative; resolve_in_workspace checks it and names what is wrong
Task = Literal["annotate", "summarize", "document", "test-plan"]
Part = Annotated[int | None, Field(ge=1)]  # annotate: which part of a file too big for one prompt
StoredKind = Literal["outline", "annotate", "summarize", "document", "test-plan"]
Scope = Literal["auto", "symbols", "notes", "files", "lines"]  # as llmem.code.search.SCOPES (not imported: lazy)
ReadKind = Literal["outline", "source", "annotate", "summarize", "document", "test-plan"]


def _llmem_error(err: SuiteError, duration_ms: float) -> dict[str, Any]:
    return error_envelope(err).model_dump(mode="json")


class _McpProgress:
    """Forwards domain progress from the worker thread to the client's progress token."""

    def __init__(self, ctx: Context[Any, Any] | None):
        import anyio.lowlevel

        self.ctx = ctx
        # Made on the event loop: a parse's background thread (not one of anyio's) reports through it.
        self.token = anyio.lowlevel.current_token()

    def report(self, done: int, total: int | None, message: str) -> None:
        if self.ctx is None:
            return
        import anyio.from_thread

        try:
            anyio.from_thread.run(self.ctx.report_progress, done, total, message, token=self.token)
        except Exception:  # progress is advisory; a client that cannot take it must not fail the work
            pass


def build_server(config: ServerConfig) -> SuiteServer:
    runtime = Runtime(config)
    server = SuiteServer(
        runtime,
        name="llmem-mcp",
        version=__version__,
        instructions=INSTRUCTIONS,
        purpose=PURPOSE,
        protocol_notes=PROTOCOL,
        error_payload=_llmem_error,
        guide_sections=[
            ("Searching", SEARCH_GUIDE),
            ("How to find usages", USAGES),
            ("What an edit broke", CHECK_GUIDE),
            ("Answers about the code as it is now", FRESHNESS),
        ],
    )

    def svc() -> Llmem:
        from llmem.code.artifacts import Llmem  # the domain (outlines, tasks) loads at first use

        return runtime.service(Llmem)

    def ok(data: dict[str, Any], next_action: str) -> Envelope:
        return Envelope(status="success", data=data, nextAction=next_action)

    async def generate_artifact(
        path: Path_ = ".",
        task: Literal["parse", *Task.__args__] = "parse",  # type: ignore[valid-type]
        part: Part = None,
        ctx: Context[Any, Any] | None = None,
    ) -> Envelope:
        if task != "parse":
            import anyio.to_thread

            return await anyio.to_thread.run_sync(svc().prompt, path, task, part)
        import anyio.to_thread

        budget = float(runtime.limits.parse_budget_s)
        data = await anyio.to_thread.run_sync(svc().parse, path, _McpProgress(ctx), budget, abandon_on_cancel=True)
        hint = (
            f"{len(data['ignored_with_artifacts'])} path(s) listed in .llmemignore still have artifacts "
            "(ignored_with_artifacts): delete_artifact(path) removes them."
            if data.get("ignored_with_artifacts")
            else "Search with search_artifacts(query) or read outlines with get_artifact(path)."
            if data.get("complete", True)
            else "Still parsing in the background: store_status shows progress; call generate_artifact "
            "again on the same path to wait for it."
            if data.get("state") == "running"
            else "Some files failed (see failed_files); fix them or list them in .llmemignore, then run again."
        )
        if data.get("refreshed_since"):
            hint = (
                f"{data['refreshed_since_total']} file(s) counted unchanged were re-parsed after their edit by a "
                f"read already (refreshed_since): the edits are in the outlines. {hint}"
            )
        return ok(data, hint)

    def get_artifact(
        path: Path_,
        kind: ReadKind = "outline",
        symbol: Annotated[str | None, Field(max_length=500, description="one symbol, e.g. Class.method")] = None,
        offset: Annotated[int, Field(ge=0)] = 0,
        limit: Annotated[int | None, Field(ge=1, le=100_000)] = None,
    ) -> Envelope:
        data = svc().get(path, kind, offset, limit, symbol)
        more = data.get("next_offset")
        hint = (
            f"Call again with offset={more} for the next page."
            if more is not None
            else f"Stale: generate_artifact({data['path']!r}) outlines it afresh."
            if data["status"] == "stale" and kind == "outline"
            else f"Stale: generate_prompt({data['path']!r}, {kind!r}) writes it afresh"
            + (
                f"; it names {len(data['stale_dependencies'])} symbol(s) whose code changed or went since "
                "(stale_dependencies: read_with shows each)"
                if data.get("stale_dependencies")
                else ""
            )
            + (
                f"; it still names {len(data['gone_names_mentioned'])} name(s) gone from the code "
                "(gone_names_mentioned)."
                if data.get("gone_names_mentioned")
                else "."
            )
            + (
                f" It names {len(data['renamed_names_mentioned'])} renamed symbol(s) by the old name "
                "(renamed_names_mentioned: old → new)."
                if data.get("renamed_names_mentioned")
                else ""
            )
            if data["status"] == "stale"
            else "Done."
        )
        return ok(data, hint)

    def list_artifacts(
        directory: Path_ = ".",
        kind: StoredKind | None = None,
        status: Literal["fresh", "stale", "orphaned", "pending"] | None = None,
        limit: Annotated[int, Field(ge=1, le=500)] = 50,
        cursor: Annotated[str | None, Field(max_length=8192)] = None,
    ) -> Envelope:
        data = svc().list(directory, kind, status, limit, cursor)
        hint = "Call again with cursor=next_cursor for more." if data["next_cursor"] else "That is all."
        if status == "stale" and data["count"]:
            hint += (
                " To refresh: generate_artifact(path) re-parses outlines; generate_prompt(path, task) writes "
                "fresh notes (annotate asks only for the stale and new symbols) or summaries."
            )
        return ok(data, hint)

    def search_artifacts(
        query: Annotated[str, Field(max_length=200)],  # a name, part of one, words, or a line's text
        kind: Annotated[str | None, Field(max_length=40)] = None,  # symbol or artifact kind: the guide says
        directory: Path_ = ".",
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
        cursor: Annotated[str | None, Field(max_length=4096)] = None,
        scope: Scope = "auto",
    ) -> Envelope:
        from llmem.code.search import Searcher  # not the whole code memory: a first search stays quick

        # The code memory's service (parsers, notes) is made only if a changed file must be re-parsed.
        data = runtime.service(Searcher).search(query, kind, directory, limit, cursor, scope, refresher=svc, notes=svc)
        stale = data["freshness"]["stale_files"]
        hint = (
            f"{stale} changed file(s) were not re-parsed in time: their hits say stale, their new symbols may be "
            f"missing; {data['freshness']['refresh_with']} refreshes them."
            if stale
            else "The server has just started and is still comparing files with their outlines "
            "(freshness.not_yet_compared): every hit was checked; if a name you expect is missing, ask again "
            "in a moment."
            if data["freshness"].get("not_yet_compared") and not data["results"]
            else "Call again with cursor=next_cursor for more."
            if data["next_cursor"]
            else "get_artifact(path, kind='source', symbol=...) shows a hit's code."
            if data["results"]
            else "Nothing found: try fewer words or part of a name; generate_artifact(path) outlines unparsed files."
        )
        gone = data.get("gone")
        if gone:  # said first: the hits are other names (a prefix, a doc word), never its uses
            uses = gone["remaining_uses"]
            hint = (
                f"{gone['name']!r} is gone (last defined in {gone['last_defined']['path']}"
                + (f", renamed to {gone['renamed_to']!r}" if "renamed_to" in gone else "")
                + f"); {uses['lines']} line(s) still name it: {' / '.join(uses['list_with'])} list them. "
                + hint
            )
        elif data.get("lines", {}).get("whole_word") and not any(r["match"] == "code" for r in data["results"]):
            hint = (
                f"No symbol is named {data['query']!r}; {data['lines']['whole_word']} line(s) hold it as a word: "
                f"{data['lines']['list_with']}. " + hint
            )
        return ok(data, hint)

    def find_references(
        symbol: Annotated[str, Field(max_length=200)],
        path: Path_ | None = None,
        kind: Annotated[str | None, Field(max_length=40)] = None,
        limit: Annotated[int, Field(ge=1)] = 50,  # a page also ends where the answer cap would be passed
        cursor: Annotated[str | None, Field(max_length=4096)] = None,
        tests: Literal["include", "exclude", "only"] = "include",
        depth: Annotated[int, Field(ge=1)] = 1,  # >1: callers as a tree (at most 5: the domain says so)
    ) -> Envelope:
        data = svc().references(symbol, path, kind, limit, cursor, tests, depth)
        if depth > 1:
            tree_left = _left_out_hint(data)
            maybe = data.get("maybe_through_dispatch", {}).get("count")
            reach = (
                (data.get("note", "") + " " if not data["tests_total"] else f"{data['tests_total']} test(s) reach it. ")
                + "A floor: tests calling through a CLI runner, a subprocess or a framework's dispatch are not "
                + "followed"
                + (
                    f"; {maybe} more take a client/app/runner fixture and may (maybe_through_dispatch). "
                    if maybe
                    else ". "
                )
                if "tests_total" in data
                else ""
            )
            return ok(
                data,
                (
                    reach
                    + (
                        "Call again with cursor=next_cursor for more."
                        if data["next_cursor"]
                        else f"Left out: {tree_left}."
                        if tree_left
                        else ""
                        if reach
                        else "That is all."
                    )
                ).strip(),
            )
        leftover = _left_out_hint(data)
        # Several definitions and no path: the uses of all of them are mixed, on this page and the next.
        narrow = (
            f"Add path=<a file of definitions> to keep only the uses of one of the {data['definitions_total']} "
            "definitions."
            if data["path"] is None and data["definitions_total"] > 1
            else ""
        )
        hint = (
            f"Nothing defines {data.get('qualified', data['symbol'])!r}"
            + (f"; it was last defined in {data['last_defined']['path']}" if data.get("last_defined") else "")
            + (
                f" and renamed to {data['last_defined']['renamed_to']!r}"
                if "renamed_to" in data.get("last_defined", {})
                else ""
            )
            + ": check_references() lists every use that no longer resolves, with the likely new name."
            if data.get("unresolved") and not data["definitions"]
            else f"{data['unresolved_total']} use(s) are marked unresolved (only a subclass defines the name; each "
            "says why): if one was renamed in its class only, fix it; check_references() lists those."
            if data.get("unresolved") and "unresolved_means" in data
            else f"{data['unresolved_total']} use(s) are marked unresolved (an import from a module that does not "
            "define the name, or a use of one; each says why): import it from where definitions says it is now."
            if data.get("unresolved")
            else f"Nothing defines {data['symbol']!r}: if it was renamed, search_artifacts(query='<the new name>') "
            "finds the new one; then fix the lines listed in unresolved_imports and the calls"
            + (" (more on the next page: cursor=next_cursor)." if data["next_cursor"] else ".")
            if data.get("unresolved_imports")
            else "Call again with cursor=next_cursor for more." + (f" {narrow}" if narrow else "")
            if data["next_cursor"]
            else f"No use of {data['symbol']!r} found" + (" beside its definition." if data["definitions"] else ".")
            if not data["total"] and not leftover
            else narrow or "That is all."
        )
        if data.get("calls_not_fitting"):
            hint = (
                f"{data['calls_not_fitting']} call(s) no longer fit the signature (arguments_do_not_fit says why); "
                "check_references() lists every such call. " + hint
            )
        if leftover:  # never "That is all." (nor "No use") over an answer that left uses out
            hint = "" if hint in ("That is all.", f"No use of {data['symbol']!r} found.") else hint + " "
            hint += f"Left out: {leftover}."
        return ok(data, hint)

    def check_references(
        path: Path_ | None = None,
        limit: Annotated[int, Field(ge=1)] = 50,
        cursor: Annotated[str | None, Field(max_length=4096)] = None,
    ) -> Envelope:
        data = svc().check_references(path, limit, cursor)
        hint = (
            "Call again with cursor=next_cursor for more."
            if data["next_cursor"]
            else "Fix each use (did_you_mean names the likely new name), then check again."
            if data["total"]
            else "Nothing broken found among the uses judged."
            if "known_gone" in data or "may_break_by_name" in data
            else "Nothing broken found."
        )
        if data.get("freshness", {}).get("stale_files"):
            hint += (
                f" {data['freshness']['stale_files']} changed file(s) could not be re-parsed in time: "
                f"{data['freshness']['refresh_with']}, then check again."
            )
        if "known_gone" in data:
            hint += (
                f" {data['known_gone']['total']} name(s) the code could not judge (a module's __getattr__, a class's "
                "computed setattr …) were defined there and are gone (known_gone): fix each like a finding."
            )
        if "may_break_by_name" in data:
            hint += (
                f" {data['may_break_by_name']['total']} use(s) of a removed member on values of unknown type may "
                "break too (may_break_by_name): read each."
            )
        return ok(data, hint)

    def generate_prompt(
        path: Path_,
        task: Task,
        part: Part = None,
        symbols: list[str] | None = None,  # annotate just these (at most 50: the domain says so)
    ) -> Envelope:
        return svc().prompt(path, task, part, symbols)

    def cancel_prompt(
        ticket: Annotated[str | None, Field(max_length=64)] = None,
        path: Path_ | None = None,
        task: Task | None = None,
    ) -> Envelope:
        data = svc().cancel(ticket, path, task)
        return ok(data, "Cancelled." if data["cancelled"] else "Nothing pending matched.")

    def store_llm_result(
        ticket: Annotated[str, Field(max_length=64)],
        path: Path_,
        task: Task,
        result: str,
        model: Annotated[str | None, Field(max_length=200)] = None,
    ) -> Envelope:
        return svc().store_result(ticket, path, task, result, model)

    def delete_artifact(path: Path_, kind: StoredKind | None = None, dry_run: bool = False) -> Envelope:
        data = svc().delete(path, kind, dry_run)
        hint = (
            "Nothing deleted: call again without dry_run to delete these."
            if dry_run
            else "Deleted."
            if data["deleted"]
            else "Nothing to delete there."
        )
        return ok(data, hint)

    def store_status(directory: Path_ = ".") -> Envelope:
        return ok(svc().store_status(directory), "list_artifacts(directory, status=...) lists them.")

    read = tool_annotations(read_only=True)
    tools: list[tuple[Callable[..., Any], ToolAnnotations, str]] = [
        (
            search_artifacts,
            read,
            "Symbols by name, notes by words, file names, text lines (scope); exact totals, paged.",
        ),
        (
            find_references,
            read,
            "Who uses a symbol: imports, calls, mentions, with line and caller; path=its file; depth=N: callers.",
        ),
        (
            check_references,
            read,
            "What an edit broke: uses under path that no longer resolve; paged.",
        ),
        (
            generate_artifact,
            tool_annotations(read_only=False, idempotent=True),
            "Outline a file or folder (task='parse', incremental); other tasks as generate_prompt.",
        ),
        (
            list_artifacts,
            read,
            "Artifacts under a folder as a tree, with status; paged.",
        ),
        (
            get_artifact,
            read,
            "An outline or notes with status; kind='source': a file's or symbol's text; paged.",
        ),
        (
            generate_prompt,
            read,
            "Prompt for your model to annotate (symbols=: just those), summarize (a folder too), document or test-plan a file.",
        ),
        (
            store_llm_result,
            tool_annotations(read_only=False, idempotent=False),
            "Check and store your model's answer to a prompt's ticket.",
        ),
        (
            cancel_prompt,
            tool_annotations(read_only=False, idempotent=True),
            "Cancel a pending prompt by ticket, or all of a path (and task).",
        ),
        (
            delete_artifact,
            tool_annotations(read_only=False, destructive=True, idempotent=True),
            "Delete one kind or all artifacts of a file or folder (recursive); dry_run previews.",
        ),
        (
            store_status,
            read,
            "Counts under a folder: artifacts by kind/status, bytes, tickets, parse jobs.",
        ),
    ]
    for fn, hints, description in tools:
        server.add_suite_tool(fn, name=fn.__name__, description=description, annotations=hints)
    return server


def _left_out_hint(data: dict[str, Any]) -> str:
    """What a find_references answer left out, for its nextAction ("" when nothing)."""
    parts = []
    if data.get("tests_left_out"):
        parts.append(f"{data['tests_left_out']} use(s) in tests (tests='include' lists them)")
    if data.get("non_tests_left_out"):
        parts.append(f"{data['non_tests_left_out']} use(s) outside tests (tests='include')")
    if isinstance(data.get("left_out"), dict) and data["left_out"].get("count"):
        parts.append(f"{data['left_out']['count']} use(s) of the name judged not of this definition (left_out)")
    if data.get("not_in_tree"):
        parts.append(
            f"{data['not_in_tree']['count']} use(s) that do not call it (not_in_tree: {data['not_in_tree']['how']})"
        )
    return "; ".join(parts)
