// Matrix driver: the Vercel AI SDK's MCP client (@ai-sdk/mcp, pinned in
// tests/node/package.json), as an AI SDK app uses it: `createMCPClient`, then `tools()`,
// whose `execute` calls a tool. Dual-era: it probes with `server/discover` and falls back
// to `initialize`. It declares elicitation only (the one server request it handles), and
// has no `logging/setLevel` and no progress callback, so those steps record what it did.
//
//   node ai_sdk.mjs KIND stdio|http|sse TARGET...
//
// See common.mjs for the arguments and the output.

import { createMCPClient, ElicitationRequestSchema } from "@ai-sdk/mcp";
import { StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

import { main, runScript } from "./common.mjs";

function transportFor(target) {
  if (target.transport === "stdio") {
    const [command, ...args] = target.where;
    return new StdioMCPTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  return { type: target.transport === "sse" ? "sse" : "http", url: target.where[0] };
}

async function session(target, obs) {
  const client = await createMCPClient({
    transport: transportFor(target),
    name: "cassette-matrix-ai-sdk",
    capabilities: { elicitation: {} },
  });
  obs.connected = true;
  client.onElicitationRequest(ElicitationRequestSchema, async (request) => {
    obs.callbacks.push({ kind: "elicitation", params: request.params });
    return target.spec.elicitation_answer;
  });
  try {
    obs.out.protocol = client.protocolVersion ?? null;
    let tools = null;
    const callTool = async ({ name, arguments: args }) => {
      tools ??= await client.tools();
      if (!(name in tools)) throw new Error(`no tool ${name}`);
      return tools[name].execute(args, { toolCallId: "matrix", messages: [] });
    };
    const adapter = {
      setLoggingLevel: async () => {
        throw new Error("the AI SDK client has no logging/setLevel");
      },
      listTools: () => client.listTools(),
      listResources: () => client.listResources(),
      listPrompts: () => client.listPrompts(),
      getPrompt: (params) => client.getPrompt(params),
      readResource: (params) => client.readResource(params),
    };
    await runScript(adapter, target, obs, callTool);
  } finally {
    await client.close();
  }
}

await main(session);
