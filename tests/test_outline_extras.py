"""Outlines of what an agent needs beyond declarations: registrations, test blocks, nested
functions, dynamic imports, manifests and Markdown headings."""

from __future__ import annotations

import textwrap
from pathlib import Path

from llmem.code.outline import build_outline, iter_symbols

REPO = Path(__file__).resolve().parents[1]

SERVER_TS = textwrap.dedent(
    """\
    import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";

    const server = new McpServer({ name: "fs" });

    server.registerTool(
      "read_file",
      { title: "Read" },
      async (args: any) => {
        const validPath = await validatePath(args.path);
        function helper(x: string) { return x; }
        return helper(validPath);
      }
    );

    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
    app.get("/health", (req, res) => res.send("ok"));
    program.command("serve").action(() => {});

    async function main() {
      const { StdioServerTransport } = await import("./transports/stdio.js");
      const inner = () => { return 1; };
      if (process.env.X) {
        function deep() {}
      }
      await server.connect(new StdioServerTransport());
    }

    main().catch((error) => {
      function report(e: unknown) { console.error(e); }
      report(error);
    });
    """
)

TEST_TS = textwrap.dedent(
    """\
    import { describe, it, expect } from "vitest";
    const lib = require("./lib");

    describe("validatePath", () => {
      beforeEach(() => {});
      function makeDir() { return "/tmp"; }
      it("rejects paths outside", async () => {
        expect(1).toBe(1);
      });
      describe.each([1, 2])("case %s", (n) => {
        test.only("works", () => {});
      });
    });
    """
)


def _symbols(path: str, text: str) -> dict[str, tuple[str, int, int]]:
    outline = build_outline(path, text.encode())
    assert outline.mode == "full", outline.reason
    return {s.qualified_name: (s.kind, s.start_line, s.end_line) for s in iter_symbols(outline)}


def test_registrations_are_named_by_their_first_argument_with_their_callbacks_inside() -> None:
    got = _symbols("src/index.ts", SERVER_TS)
    assert got["read_file"] == ("registration", 5, 13)
    assert got["read_file.helper"] == ("function", 10, 10)
    assert got["ListToolsRequestSchema"][0] == "registration"
    assert got["/health"][0] == "registration"
    assert got["serve"][0] == "registration"
    outline = build_outline("src/index.ts", SERVER_TS.encode())
    read_file = next(s for s in outline.symbols if s.name == "read_file")
    assert read_file.signature == 'server.registerTool("read_file", …)'


def test_functions_in_nested_scopes_and_callbacks_are_children() -> None:
    got = _symbols("src/index.ts", SERVER_TS)
    assert got["main"][0] == "function"
    assert got["main.inner"][0] == "function"
    assert got["main.deep"][0] == "function"
    assert got["report"][0] == "function"  # declared in a callback at the top level


def test_dynamic_imports_and_require_are_imports() -> None:
    imports = [(i.module, i.line) for i in build_outline("src/index.ts", SERVER_TS.encode()).imports]
    assert ("./transports/stdio.js", 20) in imports
    assert imports.count(("./transports/stdio.js", 20)) == 1
    test_imports = [i.module for i in build_outline("t.test.ts", TEST_TS.encode()).imports]
    assert test_imports == ["vitest", "./lib"]


def test_js_test_blocks_nest_with_their_helpers() -> None:
    got = _symbols("src/__tests__/lib.test.ts", TEST_TS)
    assert got["validatePath"] == ("test", 4, 13)
    assert got["validatePath.makeDir"][0] == "function"
    assert got["validatePath.rejects paths outside"] == ("test", 7, 9)
    assert got["validatePath.case %s"][0] == "test"
    assert got["validatePath.case %s.works"][0] == "test"
    assert not [n for n in got if "beforeEach" in n]


def test_python_tests_and_nested_functions() -> None:
    source = textwrap.dedent(
        """\
        import pytest

        def helper():
            def inner():
                return 1
            return inner

        def test_one():
            pass

        class TestGroup:
            def test_two(self):
                pass

            def setup_method(self):
                pass
        """
    )
    in_tests = _symbols("tests/test_x.py", source)
    assert in_tests["test_one"][0] == "test"
    assert in_tests["TestGroup"][0] == "test"
    assert in_tests["TestGroup.test_two"][0] == "test"
    assert in_tests["TestGroup.setup_method"][0] == "method"
    assert in_tests["helper.inner"] == ("function", 4, 5)
    elsewhere = _symbols("pkg/x.py", source)
    assert elsewhere["test_one"][0] == "function" and elsewhere["TestGroup"][0] == "class"


def test_package_json_names_entry_points_scripts_and_dependencies() -> None:
    text = textwrap.dedent(
        """\
        {
          "name": "@modelcontextprotocol/server-filesystem",
          "version": "0.6.2",
          "description": "MCP server for filesystem access",
          "bin": {
            "mcp-server-filesystem": "dist/index.js"
          },
          "main": "dist/index.js",
          "exports": { ".": "./dist/index.js", "./lib": "./dist/lib.js" },
          "scripts": {
            "build": "tsc && shx chmod +x dist/*.js",
            "test": "vitest run"
          },
          "dependencies": {
            "@modelcontextprotocol/sdk": "^1.17.0",
            "minimatch": "^10.0.1"
          },
          "devDependencies": { "vitest": "^2.1.8" }
        }
        """
    )
    got = _symbols("src/filesystem/package.json", text)
    assert got["@modelcontextprotocol/server-filesystem"] == ("package", 2, 2)
    assert got["bin.mcp-server-filesystem"] == ("entry-point", 6, 6)
    assert got["main"] == ("entry-point", 8, 8)
    assert got["exports"][0] == "module" and got["exports../lib"][0] == "entry-point"
    assert got["scripts.build"] == ("script", 11, 11)
    assert got["scripts.test"] == ("script", 12, 12)
    assert got["dependencies"] == ("module", 14, 17)
    assert got["dependencies.minimatch"] == ("dependency", 16, 16)
    assert got["devDependencies.vitest"][0] == "dependency"
    outline = build_outline("package.json", text.encode())
    assert outline.symbols[0].doc == "MCP server for filesystem access"
    assert {i.module for i in outline.imports} == {"@modelcontextprotocol/sdk", "minimatch", "vitest"}


def test_pyproject_of_this_repository() -> None:
    got = _symbols("pyproject.toml", (REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert got["llmem-debrief-mcp"][0] == "package"
    assert got["scripts.llmem-mcp"][0] == "entry-point"
    assert got["dependencies.mcp"][0] == "dependency"
    assert got["optional-dependencies.test.pytest"][0] == "dependency"
    line = got["scripts.llmem-mcp"][1]
    assert "llmem-mcp" in (REPO / "pyproject.toml").read_text(encoding="utf-8").splitlines()[line - 1]


def test_cargo_and_go_mod() -> None:
    cargo = textwrap.dedent(
        """\
        [package]
        name = "ripgrep"
        version = "14.1.0"

        [[bin]]
        name = "rg"
        path = "crates/core/main.rs"

        [dependencies]
        regex = "1.10"
        serde = { version = "1.0", features = ["derive"] }
        """
    )
    got = _symbols("Cargo.toml", cargo)
    assert got["ripgrep"] == ("package", 2, 2)
    assert got["rg"][0] == "entry-point"
    assert got["dependencies.regex"] == ("dependency", 10, 10)
    assert got["dependencies.serde"] == ("dependency", 11, 11)
    gomod = "module github.com/x/tool\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.2.3\n\tgolang.org/x/mod v0.17.0 // indirect\n)\n"
    got = _symbols("go.mod", gomod)
    assert got["github.com/x/tool"] == ("package", 1, 1)
    assert got["require.github.com/a/b"] == ("dependency", 6, 6)
    assert got["require.golang.org/x/mod"] == ("dependency", 7, 7)


def test_markdown_headings_nest_with_their_sections_and_skip_code() -> None:
    text = textwrap.dedent(
        """\
        # Filesystem server

        Intro.

        ## Tools
        ### read_file
        Reads.

        ```bash
        # not a heading
        ```

        ### write_file
        Writes.

        Setup
        -----

        Text.
        """
    )
    got = _symbols("README.md", text)
    assert got["Filesystem server"] == ("heading", 1, 19)
    assert got["Filesystem server.Tools"] == ("heading", 5, 15)
    assert got["Filesystem server.Tools.read_file"] == ("heading", 6, 12)
    assert got["Filesystem server.Tools.write_file"] == ("heading", 13, 15)
    assert got["Filesystem server.Setup"] == ("heading", 16, 19)
    assert not [n for n in got if "not a heading" in n]


def test_broken_manifests_fall_back_without_failing() -> None:
    for path, text in (("package.json", "{ not json"), ("pyproject.toml", "[project\nname="), ("go.mod", "")):
        outline = build_outline(path, text.encode())
        assert outline.mode in ("full", "fallback")
        assert outline.mode == "full" or outline.reason


def test_calls_that_only_look_like_registrations_are_not() -> None:
    text = textwrap.dedent(
        """\
        const value = cache.get("key");
        headers.delete("content-length");
        session.post("Profiler.enable", () => {});
        this.http.get("/items", { params });
        app.get("/users/:id", getUser);
        router.use("/api", api);
        ipcMain.handle("open-file", async () => {});
        """
    )
    got = {name: kind for name, (kind, _, _) in _symbols("src/app.ts", text).items()}
    assert got == {
        "value": "variable",  # a module variable, not a registration
        "/users/:id": "registration",
        "/api": "registration",
        "open-file": "registration",
    }


def test_a_chained_command_is_one_registration_with_its_action_inside() -> None:
    text = textwrap.dedent(
        """\
        program
          .command("serve")
          .description("Start the server")
          .action(async (opts) => {
            function listen() {}
            listen();
          });
        """
    )
    got = _symbols("src/cli.ts", text)
    assert got["serve"] == ("registration", 1, 7)
    assert got["serve.listen"][0] == "function"


def test_compiled_classes_object_methods_and_module_exports() -> None:
    text = textwrap.dedent(
        """\
        var Range = /** @class */ (function () {
            function Range(start, end) { this.start = start; }
            Range.prototype.compare = function (row, column) { return 0; };
            return Range;
        }());
        const def = {
          keyword: "required",
          code(cxt) {
            function loopAll() {}
            loopAll();
          },
          error: { message: () => "must have", params: ({ missing }) => missing },
        };
        const plain = { a: 1 };
        module.exports = function applyBind() { return 1; };
        """
    )
    got = _symbols("lib/range.js", text)
    assert got["Range"][0] == "function"
    assert got["Range.prototype.compare"][0] == "function"
    assert got["def"] == ("constant", 6, 13)
    assert got["def.code"] == ("method", 8, 11)
    assert got["def.code.loopAll"][0] == "function"
    assert got["def.error.message"][0] == "method"
    assert got["plain"] == ("variable", 14, 14)  # a plain object: one variable, not a container
    assert got["applyBind"] == ("function", 15, 15)


def test_the_body_filter_never_loses_a_symbol_on_real_code() -> None:
    """Function bodies are walked only when their text may declare something; walking every
    body must find nothing more, on the real JS/TS of tests/js/node_modules."""
    import pytest

    from llmem.code.outline import _ts_javascript

    root = REPO / "tests" / "js" / "node_modules" / "@modelcontextprotocol" / "sdk" / "dist" / "esm"
    if not root.is_dir():
        pytest.skip("tests/js/node_modules is not installed (npm ci --prefix tests/js)")
    files = sorted(root.rglob("*.js"))[:150]
    filtered = {f: build_outline(f.name, f.read_bytes()).model_dump() for f in files}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_ts_javascript._Extractor, "may_declare", lambda self, node: True)
        walked = {f: build_outline(f.name, f.read_bytes()).model_dump() for f in files}
    assert walked == filtered


def test_markdown_front_matter_lists_and_tables_are_not_headings() -> None:
    text = textwrap.dedent(
        """\
        ---
        title: Guide
        ---
        # Guide

        - an item
        ---

        Real heading
        ============
        """
    )
    got = _symbols("docs/guide.md", text)
    assert set(got) == {"Guide", "Real heading"}
    assert got["Guide"] == ("heading", 4, 8)
    assert got["Real heading"] == ("heading", 9, 10)


def test_package_json_lines_are_exact_when_keys_repeat_in_nested_objects() -> None:
    text = textwrap.dedent(
        """\
        {
          "name": "pkg",
          "exports": {
            ".": { "types": "./dist/index.d.ts", "import": "./dist/index.js" }
          },
          "types": "./dist/index.d.ts",
          "scripts": { "test": "vitest" },
          "devDependencies": { "types": "1.0.0" }
        }
        """
    )
    got = _symbols("package.json", text)
    assert got["types"] == ("entry-point", 6, 6)
    assert got["exports.."] == ("entry-point", 4, 4)
    assert got["devDependencies.types"] == ("dependency", 8, 8)
    assert got["scripts.test"] == ("script", 7, 7)


def test_cargo_bins_named_like_their_package_and_dependency_tables() -> None:
    text = textwrap.dedent(
        """\
        [package]
        name = "tool"

        [[bin]]
        name = "tool"
        path = "src/main.rs"

        [dependencies.serde]
        version = "1.0"
        """
    )
    got = _symbols("Cargo.toml", text)
    top = build_outline("Cargo.toml", text.encode()).symbols
    assert (top[0].kind, top[0].name, top[0].start_line) == ("package", "tool", 2)
    bins = [s for s in iter_symbols(build_outline("Cargo.toml", text.encode())) if s.kind == "entry-point"]
    assert [(b.name, b.start_line) for b in bins] == [("tool", 5)]
    assert got["dependencies.serde"] == ("dependency", 8, 8)


def test_python_route_registrations_and_dynamic_imports() -> None:
    text = textwrap.dedent(
        """\
        import importlib
        from flask import Flask

        app = Flask(__name__)


        def index():
            return "ok"


        app.add_url_rule("/", view_func=index)


        def create_app():
            router.add_api_route("/items", list_items, methods=["GET"])
            plugin = importlib.import_module("plugins.extra")
            return plugin
        """
    )
    outline = build_outline("web/app.py", text.encode())
    got = {s.qualified_name: (s.kind, s.start_line, s.signature) for s in iter_symbols(outline)}
    assert got["/"] == ("registration", 11, 'app.add_url_rule("/", …)')
    assert got["create_app./items"][0] == "registration"
    assert ("plugins.extra", 16) in [(i.module, i.line) for i in outline.imports]
