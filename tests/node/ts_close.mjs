// The TypeScript SDK client (v1) opens a stdio session, calls a tool and closes it the
// way the SDK closes every server: end its stdin, SIGTERM it 2 s later if it is still
// there, SIGKILL 2 s after that. Prints ONE JSON line: the tools listed, the echo
// answer's text, and how long close() took. Used by tests/e2e/test_no_orphans.py.
//
// Usage: node ts_close.mjs COMMAND [ARGS...]
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, stderr: "inherit" });
const client = new Client({ name: "closer", version: "1" });
await client.connect(transport);
const tools = (await client.listTools()).tools.map((t) => t.name);
const echo = await client.callTool({ name: "echo", arguments: { said: "bye" } });
const started = Date.now();
await client.close();
const closeMs = Date.now() - started;
process.stdout.write(JSON.stringify({ tools, echo: echo.content[0].text, closeMs }) + "\n");
process.exit(0);
