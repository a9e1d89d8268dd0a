#!/usr/bin/env node
// A real TypeScript-SDK MCP client, used by tests/test_js_clients.py.
//
//   node tests/js/client.mjs <command> [args...] [--tool NAME [--args '{"k":"v"}']]... [--timeout-ms N]
//
// Spawns <command> [args...] as a stdio MCP server (with this process's whole environment, so the
// test's isolated LLMEM_* folders reach it), initializes, lists the tools, calls each --tool in order
// (--args applies to the --tool before it), and prints one JSON object on stdout:
//
//   {"protocolVersion", "serverInfo", "capabilities", "tools": <tools/list result>,
//    "calls": [{"tool", "arguments", "result": <tools/call result>}
//              | {"tool", "arguments", "error": {"code", "message", "data"}}, ...]}
//
// A JSON-RPC error from tools/call (or the SDK's own output-schema check of the result, which it makes
// from the outputSchema that tools/list gave) is reported in its "calls" entry, exit 0. Anything that
// stops the session (spawn, initialize, tools/list, bad usage) goes to stderr, exit 1.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const OPTIONS = new Set(["--tool", "--args", "--timeout-ms"]);

function parseArgv(argv) {
  const first = argv.findIndex((a) => OPTIONS.has(a));
  const target = first === -1 ? argv : argv.slice(0, first);
  const rest = first === -1 ? [] : argv.slice(first);
  const calls = [];
  let timeoutMs = 30000;
  for (let i = 0; i < rest.length; i += 2) {
    const [flag, value] = [rest[i], rest[i + 1]];
    if (!OPTIONS.has(flag) || value === undefined) {
      throw new Error(`expected --tool NAME, --args JSON or --timeout-ms N, got ${JSON.stringify(rest.slice(i))}`);
    }
    if (flag === "--tool") calls.push({ tool: value, arguments: {} });
    else if (flag === "--timeout-ms") timeoutMs = Number(value);
    else if (calls.length === 0) throw new Error("--args must follow the --tool it is for");
    else calls[calls.length - 1].arguments = JSON.parse(value);
  }
  if (target.length === 0) throw new Error("usage: client.mjs <command> [args...] [--tool NAME [--args JSON]]...");
  return { command: target[0], commandArgs: target.slice(1), calls, timeoutMs };
}

async function main() {
  const { command, commandArgs, calls, timeoutMs } = parseArgv(process.argv.slice(2));
  const env = Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === "string"));
  const transport = new StdioClientTransport({ command, args: commandArgs, env, stderr: "inherit" });
  let protocolVersion = null;
  // The stdio transport has no use for the negotiated version; this hook lets us report it.
  transport.setProtocolVersion = (v) => {
    protocolVersion = v;
  };
  const client = new Client({ name: "llmem-debrief-ts-sdk-test", version: "0.0.0" }, { capabilities: {} });
  const request = { timeout: timeoutMs };
  await client.connect(transport, request);
  const out = {
    protocolVersion,
    serverInfo: client.getServerVersion(),
    capabilities: client.getServerCapabilities(),
  };
  try {
    out.tools = await client.listTools(undefined, request);
    out.calls = [];
    for (const call of calls) {
      try {
        const result = await client.callTool({ name: call.tool, arguments: call.arguments }, undefined, request);
        out.calls.push({ ...call, result });
      } catch (err) {
        const error = { code: err?.code ?? null, message: String(err?.message ?? err), data: err?.data ?? null };
        out.calls.push({ ...call, error });
      }
    }
  } finally {
    await client.close();
  }
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`client.mjs: ${err?.stack ?? err}\n`);
    process.exit(1);
  },
);
