// Tool calls through the official TypeScript SDK client (v1), reporting how each ended.
//
// Usage: node ts_faults.mjs STEPS_JSON (--url URL | COMMAND [ARGS...])
//
// STEPS_JSON is a list of {"tool": NAME, "args": {...}, "timeoutMs": N}. Connects to the
// stdio server COMMAND or the streamable-HTTP endpoint URL, runs each call in turn and
// prints ONE JSON object: {"steps": [{"ok": RESULT} | {"error": {name, code, message}}],
// "transportErrors": [messages the transport reported through onerror]}. A step that
// fails does not stop the others: a test of fault injection wants to see every outcome.
// Used by tests/e2e/test_faults.py.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function fail(message) {
  process.stderr.write(`ts_faults: error: ${String(message).split("\n")[0]}\n`);
  process.exit(1);
}

function transportFor(target) {
  if (target[0] === "--url") {
    return new StreamableHTTPClientTransport(new URL(target[1]), {
      reconnectionOptions: {
        maxReconnectionDelay: 1000,
        initialReconnectionDelay: 100,
        reconnectionDelayGrowFactor: 1.5,
        maxRetries: 0,
      },
    });
  }
  const [command, ...args] = target;
  return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
}

async function main(argv) {
  if (argv.length < 2) {
    fail("usage: node ts_faults.mjs STEPS_JSON (--url URL | COMMAND [ARGS...])");
  }
  const steps = JSON.parse(argv[0]);
  const transport = transportFor(argv.slice(1));
  const transportErrors = [];
  const client = new Client({ name: "cassette-ts-faults", version: "1.0.0" });
  await client.connect(transport);
  // Set after connect: connect installs the client's own handler, which this one wraps.
  const own = transport.onerror;
  transport.onerror = (error) => {
    transportErrors.push(String(error && error.message ? error.message : error));
    own?.(error);
  };
  const out = [];
  for (const step of steps) {
    try {
      const result = await client.callTool(
        { name: step.tool, arguments: step.args ?? {} },
        undefined,
        { timeout: step.timeoutMs ?? 60000 },
      );
      out.push({ ok: result });
    } catch (error) {
      out.push({
        error: { name: error?.name ?? null, code: error?.code ?? null, message: String(error?.message ?? error) },
      });
    }
  }
  process.stdout.write(JSON.stringify({ steps: out, transportErrors }) + "\n");
  await client.close().catch(() => {});
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err) => fail(err instanceof Error ? err.message : err),
);
