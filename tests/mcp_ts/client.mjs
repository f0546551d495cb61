// Drives `ragit mcp` with the official MCP TypeScript SDK client (the one Claude Code, Cursor and
// Claude Desktop are built on) and checks what that client accepts:
//   - every tool answers good arguments with a result the SDK validates against the declared
//     output schema (callTool throws when structuredContent does not match it);
//   - every tool answers bad arguments with a tool error (isError: true, no structuredContent)
//     whose text is ragit's error object, typed by `code`;
//   - a call that names no tool is a JSON-RPC -32602 error carrying ragit's error object.
//
// Usage: node client.mjs <config.json>
//   config: {command, args, repo, sessionId, refId, refIdText, evidence}
// Prints one JSON report on stdout: {tools, calls: [{tool, case, outcome, code, ...}], failures};
// exits 1 when any check failed. Run by tests/integration/test_mcp_typescript.py.

import { readFileSync } from "node:fs";
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const ERROR_KEYS = ["code", "category", "message", "retryable", "details", "recovery"];
const ANCHOR = { goal: "locate a failing test", stopCondition: "stop without direct evidence", verificationTarget: "the test name" };
const TIMEOUT = { timeout: 30000 };

const report = { tools: [], calls: [], failures: [] };

// Structured outputs omit null-valued object keys (array items are kept as they are).
function hasNullKey(value) {
  if (Array.isArray(value)) return value.some(hasNullKey);
  if (value && typeof value === "object") return Object.values(value).some((v) => v === null || hasNullKey(v));
  return false;
}

// A good call: the SDK already validated structuredContent against the output schema.
async function good(client, tool, label, args, check = () => {}) {
  const entry = { tool, case: label, outcome: "result" };
  try {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, TIMEOUT);
    assert.equal(result.isError ?? false, false, `isError: ${result.content?.[0]?.text}`);
    const data = result.structuredContent;
    assert.ok(data && typeof data === "object", "structuredContent is an object");
    assert.ok(data.snapshot && typeof data.snapshot.status === "string", "snapshot block present");
    const text = result.content[0].text;
    assert.ok(!text.includes("\n"), "text content is compact JSON (one line)");
    assert.deepEqual(JSON.parse(text), data, "text content is the structured content");
    assert.ok(!hasNullKey(data), "no null-valued keys");
    entry.bytes = Buffer.byteLength(text);
    check(data, entry);
  } catch (err) {
    entry.outcome = "failed";
    report.failures.push(`${tool} ${label}: ${err.message}`);
  }
  report.calls.push(entry);
}

// A bad call: a tool error whose text is ragit's error object; the SDK must not throw.
async function bad(client, tool, label, args, code, reason) {
  const entry = { tool, case: label, outcome: "tool_error" };
  try {
    const result = await client.callTool({ name: tool, arguments: args }, undefined, TIMEOUT);
    assert.equal(result.isError, true, "isError");
    assert.equal(result.structuredContent, undefined, "no structuredContent on a tool error");
    const error = JSON.parse(result.content[0].text);
    assert.deepEqual(Object.keys(error), ERROR_KEYS, "the error object's keys");
    entry.code = error.code;
    entry.reason = error.details?.reason;
    assert.equal(error.code, code);
    if (reason) assert.equal(error.details.reason, reason);
    assert.equal(typeof error.recovery.command, "string");
  } catch (err) {
    entry.outcome = "failed";
    report.failures.push(`${tool} ${label}: ${err.message}`);
  }
  report.calls.push(entry);
}

// A call that names no tool: JSON-RPC -32602 whose data is ragit's error object.
async function invalidParams(client, tool, label, args, code) {
  const entry = { tool, case: label, outcome: "rpc_error" };
  try {
    await client.callTool({ name: tool, arguments: args }, undefined, TIMEOUT);
    entry.outcome = "failed";
    report.failures.push(`${tool} ${label}: answered instead of a JSON-RPC error`);
  } catch (err) {
    try {
      assert.ok(err instanceof McpError, `McpError, got ${err}`);
      assert.equal(err.code, -32602);
      entry.rpcCode = err.code;
      entry.code = err.data?.code;
      assert.equal(err.data.code, code);
    } catch (inner) {
      entry.outcome = "failed";
      report.failures.push(`${tool} ${label}: ${inner.message}`);
    }
  }
  report.calls.push(entry);
}

const transport = new StdioClientTransport({
  command: config.command,
  args: [...config.args, "mcp", "--cwd", config.repo],
  env: process.env,
  stderr: "inherit",
});
const client = new Client({ name: "ragit-ts-sdk-test", version: "1.0.0" });
await client.connect(transport);

try {
  const { tools } = await client.listTools();
  report.tools = tools.map((t) => t.name);

  // ---- good arguments: every tool
  let citation;
  await good(client, "query", "default view", { question: "restore auth context", topK: 3 }, (data, entry) => {
    assert.equal(data.hits.length, 3);
    assert.ok(data.hits.every((h) => "excerpt" in h && !("text" in h) && !("scoreVector" in h)), "minimal view");
    citation = data.hits[0].citation.id;
  });
  await good(client, "query", "view full", { question: "restore auth context", topK: 1, view: "full" }, (data) => {
    assert.ok("text" in data.hits[0], "full view has text");
  });
  await good(client, "context_pack", "budget", { goal: "token rotation", budget: 300 });
  await good(client, "context_packet", "retrieve and evidence", {
    taskAnchor: ANCHOR, budgetUnits: 400, retrieve: { goal: "token rotation", budget: 200 }, evidence: [config.evidence],
  });
  await good(client, "context_packet", "blocked is a result", {
    taskAnchor: ANCHOR, budgetUnits: 8,
    candidates: [{ id: "c1", kind: "direct-evidence", relevance: "current", freshness: "fresh", sizeUnits: 3, content: "x" }],
  }, (data) => assert.equal(data.state, "blocked"));
  await good(client, "memory_wrap", "dry run", { goal: "g", summary: "s", dryRun: true });
  await good(client, "memory_wrap", "write", {
    goal: "finish token rotation", summary: "rotation done", openLoops: [{ title: "docs", nextAction: "edit the ADR" }],
  });
  await good(client, "memory_recall", "minimal", { goal: "finish token rotation" });
  await good(client, "artifact_capture", "session finding", {
    scope: "session", kind: "finding", title: "Tokens rotate", text: "Refresh tokens rotate on use.",
  });
  await good(client, "tool_result_recall", "object", { refId: config.refId, sessionId: config.sessionId });
  await good(client, "tool_result_recall", "string", { refId: config.refIdText, sessionId: config.sessionId });
  await good(client, "session_search", "hits", { query: "refresh token", limit: 5 }, (data) => {
    assert.ok(data.count >= 1, "a mirrored message matches");
  });
  await good(client, "verify_citation", "ok", { citation }, (data) => assert.equal(data.status, "ok"));

  // ---- bad arguments: every tool, typed tool errors
  const unknownArg = { bogusArgument: 1 };
  await bad(client, "query", "branch name as at", { question: "x", at: "master" }, "SNAPSHOT_REF_INVALID");
  await bad(client, "query", "topK 0", { question: "x", topK: 0 }, "INPUT_INVALID", "out_of_range");
  await bad(client, "query", "unknown argument", { question: "x", ...unknownArg }, "INPUT_INVALID", "unknown_field");
  await bad(client, "query", "question over 64 KB", { question: "x".repeat(70000) }, "INPUT_INVALID", "too_large");
  await bad(client, "query", "bad view", { question: "x", view: "huge" }, "INPUT_INVALID", "not_one_of");
  await bad(client, "context_pack", "empty goal", { goal: "  " }, "INPUT_INVALID", "empty");
  await bad(client, "context_pack", "budget 0", { goal: "g", budget: 0 }, "INPUT_INVALID", "out_of_range");
  await bad(client, "context_pack", "unknown argument", { goal: "g", ...unknownArg }, "INPUT_INVALID", "unknown_field");
  await bad(client, "context_packet", "missing budgetUnits", { taskAnchor: ANCHOR }, "INPUT_INVALID", "required");
  await bad(client, "context_packet", "evidence outside", { taskAnchor: ANCHOR, budgetUnits: 10, evidence: ["/etc/hostname"] },
    "INPUT_INVALID", "path_outside_repo");
  await bad(client, "context_packet", "unknown argument", { taskAnchor: ANCHOR, budgetUnits: 10, ...unknownArg },
    "INPUT_INVALID", "unknown_field");
  await bad(client, "memory_recall", "empty goal", { goal: "" }, "INPUT_INVALID", "empty");
  await bad(client, "memory_recall", "unknown argument", { goal: "g", ...unknownArg }, "INPUT_INVALID", "unknown_field");
  await bad(client, "memory_wrap", "missing summary", { goal: "g" }, "INPUT_INVALID", "required");
  await bad(client, "memory_wrap", "unknown argument", { goal: "g", summary: "s", ...unknownArg }, "INPUT_INVALID", "unknown_field");
  await bad(client, "artifact_capture", "bad scope", { scope: "bogus", kind: "k", title: "t", text: "x" }, "INPUT_INVALID", "not_one_of");
  await bad(client, "artifact_capture", "unknown argument", { scope: "session", kind: "k", title: "t", text: "x", ...unknownArg },
    "INPUT_INVALID", "unknown_field");
  await bad(client, "tool_result_recall", "unknown ref", { refId: "nope", sessionId: config.sessionId }, "TOOL_RESULT_UNAVAILABLE", "not_found");
  await bad(client, "tool_result_recall", "bad session id", { refId: "x", sessionId: "../etc" }, "INPUT_INVALID", "invalid_format");
  await bad(client, "session_search", "blank query", { query: "  " }, "INPUT_INVALID", "empty");
  await bad(client, "session_search", "unknown argument", { query: "x", ...unknownArg }, "INPUT_INVALID", "unknown_field");
  await bad(client, "verify_citation", "unknown citation", { citation: "cite-000000000000000000000000" }, "CITATION_NOT_FOUND", "unknown_id");
  await bad(client, "verify_citation", "not a handle", { citation: "not a handle" }, "INPUT_INVALID", "invalid_format");
  await bad(client, "verify_citation", "unknown argument", { citation: "x", ...unknownArg }, "INPUT_INVALID", "unknown_field");

  // ---- no such tool: a protocol error, still typed
  await invalidParams(client, "frobnicate", "unknown tool", {}, "COMMAND_UNKNOWN");
  await client.ping();
} catch (err) {
  report.failures.push(`session: ${err.stack ?? err}`);
} finally {
  await client.close();
}

process.stdout.write(JSON.stringify(report) + "\n");
process.exitCode = report.failures.length ? 1 : 0;
