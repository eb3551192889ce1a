// A scripted MCP session driven by the official TypeScript SDK client (v1).
//
// Usage: node ts_client.mjs COMMAND [ARGS...]
//
// Spawns COMMAND as a stdio MCP server, connects (initialize), runs a fixed sequence of
// requests and prints ONE JSON object with the results on stdout. The server's stderr is
// inherited (it goes to our stderr, never to stdout). On failure: a one-line error on
// stderr and exit code 1. Used by tests/e2e/test_ts_client.py to compare a live server
// with a cassette replay of it.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

function fail(message) {
  process.stderr.write(`ts_client: error: ${String(message).split("\n")[0]}\n`);
  process.exit(1);
}

async function main(argv) {
  if (argv.length < 1) {
    fail("usage: node ts_client.mjs COMMAND [ARGS...]");
  }
  const [command, ...args] = argv;
  const transport = new StdioClientTransport({
    command,
    args,
    env: { ...process.env },
    stderr: "inherit",
  });
  // The v1 client exposes no getter for the negotiated protocol version; it hands the
  // version to transport.setProtocolVersion() when the transport has one (HTTP
  // transports do, stdio does not), so give the stdio transport one to capture it.
  let negotiatedProtocolVersion = null;
  transport.setProtocolVersion = (version) => {
    negotiatedProtocolVersion = version;
  };

  const client = new Client({ name: "cassette-ts-client", version: "1.0.0" });
  await client.connect(transport);
  try {
    const out = {};
    out.serverVersion = client.getServerVersion() ?? null;
    out.protocolVersion = negotiatedProtocolVersion;
    out.serverCapabilities = client.getServerCapabilities() ?? null;
    out.instructions = client.getInstructions() ?? null;

    const tools = await client.listTools();
    out.tools = tools.tools.map((t) => t.name);
    const resources = await client.listResources();
    out.resources = resources.resources.map((r) => r.uri);
    const templates = await client.listResourceTemplates();
    out.resourceTemplates = templates.resourceTemplates.map((t) => t.uriTemplate);
    const prompts = await client.listPrompts();
    out.prompts = prompts.prompts.map((p) => p.name);

    out.echo1 = await client.callTool({ name: "echo", arguments: { message: "hello from ts" } });
    out.echo2 = await client.callTool({ name: "echo", arguments: { message: "hello from ts" } });
    out.getSum = await client.callTool({ name: "get-sum", arguments: { a: 2, b: 3 } });

    if (out.resources.length === 0) {
      throw new Error("the server listed no resources");
    }
    out.readResource = await client.readResource({ uri: out.resources[0] });
    out.simplePrompt = await client.getPrompt({ name: "simple-prompt" });

    process.stdout.write(JSON.stringify(out) + "\n");
  } finally {
    await client.close();
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err) => fail(err instanceof Error ? err.message : err),
);
