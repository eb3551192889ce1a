// Matrix driver: the official TypeScript SDK 2 client packages (@modelcontextprotocol/client,
// pinned in tests/node/package.json).
//
//   node ts_sdk2.mjs [--mode legacy|auto|2026-07-28] KIND stdio|http|sse TARGET...
//
// --mode is the client's `versionNegotiation.mode` (a version pins it); its default is
// `legacy`, the plain `initialize` handshake. See common.mjs for the arguments and output.

import {
  Client,
  SSEClientTransport,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

import { main, runScript } from "./common.mjs";

function transportFor(target) {
  if (target.transport === "stdio") {
    const [command, ...args] = target.where;
    return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
  }
  const url = new URL(target.where[0]);
  return target.transport === "sse" ? new SSEClientTransport(url) : new StreamableHTTPClientTransport(url);
}

function negotiation(mode) {
  if (!mode || mode === "legacy" || mode === "auto") {
    return { mode: mode ?? "legacy" };
  }
  return { mode: { pin: mode } };
}

async function session(target, obs) {
  const client = new Client(
    { name: "cassette-matrix-ts-sdk2", version: "1.0.0" },
    {
      capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: {} },
      versionNegotiation: negotiation(target.mode),
    },
  );
  client.setRequestHandler("sampling/createMessage", async (request) => {
    obs.callbacks.push({ kind: "sampling", params: request.params });
    return target.answers.sampling;
  });
  client.setRequestHandler("elicitation/create", async (request) => {
    obs.callbacks.push({ kind: "elicitation", params: request.params });
    return target.spec.elicitation_answer;
  });
  client.setRequestHandler("roots/list", async () => {
    obs.callbacks.push({ kind: "roots" });
    return { roots: target.answers.roots };
  });
  client.setNotificationHandler("notifications/message", async (notification) => {
    obs.logs.push(notification.params);
  });
  await client.connect(transportFor(target));
  obs.connected = true;
  try {
    obs.out.protocol = client.getNegotiatedProtocolVersion() ?? null;
    const info = client.getServerVersion();
    obs.out.server = info ? { name: info.name, version: info.version } : null;
    await runScript(client, target, obs, (params, options) => client.callTool(params, options));
  } finally {
    await client.close();
  }
}

await main(session);
