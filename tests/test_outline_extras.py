"""Outlines of what an agent needs beyond declarations: registrations, test blocks, nested
functions, dynamic imports, manifests and Markdown headings."""

from __future__ import annotations

import textwrap
from pathlib import Path

from llmem.outline import build_outline, iter_symbols

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
