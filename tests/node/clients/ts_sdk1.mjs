// Matrix driver: the official TypeScript SDK 1.x client (@modelcontextprotocol/sdk, pinned
// in tests/node/package.json). It knows only the `initialize` handshake.
//
//   node ts_sdk1.mjs KIND stdio|http|sse TARGET...
//
// See common.mjs for the arguments and the output.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

import { main, runScript } from "./common.mjs";

function transportFor(target) {
  if (target.transport === "stdio") {
    const [command, ...args] = target.where;
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  const url = new URL(target.where[0]);
  return target.transport === "sse" ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
}

async function session(target, obs) {
  const transport = transportFor(target);
  // The v1 client has no getter for the negotiated version: it hands it to the transport.
  let negotiated = null;
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (version) => {
    negotiated = version;
    setVersion?.(version);
  };
  const client = new Client(
    { name: "cassette-matrix-ts-sdk1", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} } },
  );
  client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
    obs.callbacks.push({ kind: "sampling", params: request.params });
    return target.answers.sampling;
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    obs.callbacks.push({ kind: "elicitation", params: request.params });
    return target.spec.elicitation_answer;
  });
  client.setRequestHandler(ListRootsRequestSchema, async () => {
    obs.callbacks.push({ kind: "roots" });
    return { roots: target.answers.roots };
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
    obs.logs.push(notification.params);
  });
  await client.connect(transport);
  obs.connected = true;
  try {
    obs.out.protocol = negotiated;
    const info = client.getServerVersion();
    obs.out.server = info ? { name: info.name, version: info.version } : null;
    await runScript(client, target, obs, (params, options) => client.callTool(params, undefined, options));
  } finally {
    await client.close();
  }
}

await main(session);
