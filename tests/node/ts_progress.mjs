// The TypeScript SDK client (v1) calls server-everything's trigger-long-running-operation
// with an onprogress callback and prints ONE JSON line: the progress values the callback
// saw, and the result's text. Used by tests/e2e/test_ts_progress.py.
//
// Usage: node ts_progress.mjs stdio COMMAND [ARGS...]
//        node ts_progress.mjs http URL      (streamable HTTP)
//        node ts_progress.mjs sse URL       (legacy HTTP+SSE)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";

const [kind, ...rest] = process.argv.slice(2);
let transport;
if (kind === "stdio") transport = new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "inherit" });
else if (kind === "http") transport = new StreamableHTTPClientTransport(new URL(rest[0]));
else transport = new SSEClientTransport(new URL(rest[0]));
const client = new Client({ name: "probe", version: "1" });
await client.connect(transport);
const seen = [];
const result = await client.callTool(
  { name: "trigger-long-running-operation", arguments: { duration: 0.3, steps: 3 } },
  undefined,
  { onprogress: (p) => seen.push(p.progress) },
);
process.stdout.write(JSON.stringify({ seen, text: result.content[0].text }) + "\n");
await client.close();
process.exit(0);
