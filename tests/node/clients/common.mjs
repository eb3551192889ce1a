// What the TypeScript drivers of the cross-client matrix share: arguments, the scripted
// session of tests/clients/session.json, normalisation and output. It mirrors
// tests/clients/common.py; see that file and tests/clients/README.md.
//
//   node DRIVER.mjs [--mode MODE] KIND stdio COMMAND [ARG...]
//   node DRIVER.mjs [--mode MODE] KIND http URL
//   node DRIVER.mjs [--mode MODE] KIND sse URL
//
// Prints ONE JSON object (keys sorted). A failure to connect prints
// {"error": ..., "stage": "connect"} and exits 1; a failed step is recorded in its place as
// {"error": MESSAGE} and the session goes on.

import { readFileSync } from "node:fs";

const SESSION = JSON.parse(
  readFileSync(new URL("../../clients/session.json", import.meta.url), "utf-8"),
);

// Dropped wherever they occur (as in common.py): client-chosen or server-chosen ids and
// wall-clock time.
const DROPPED_KEYS = new Set(["progressToken", "requestId", "relatedRequestId", "timestamp"]);

// Per-step deadline: a replay that never answers fails the step, not the run.
export const STEP_TIMEOUT_MS = 20000;

// The steps to run, when CASSETTE_MATRIX_STEPS names them (comma-separated), as in
// common.py; every step otherwise.
const ONLY = new Set((process.env.CASSETTE_MATRIX_STEPS ?? "").split(",").filter(Boolean));

export function normalise(value) {
  if (Array.isArray(value)) {
    return value.map(normalise);
  }
  if (value !== null && typeof value === "object") {
    const out = {};
    for (const key of Object.keys(value).sort()) {
      const item = value[key];
      if (DROPPED_KEYS.has(key) || item === null || item === undefined) {
        continue;
      }
      out[key] = normalise(item);
    }
    return out;
  }
  return value;
}

export function oneLine(err) {
  const text = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  return text.split("\n")[0].trim();
}

export function parseArgs(argv) {
  const args = [...argv];
  let mode = null;
  if (args[0] === "--mode") {
    mode = args[1];
    args.splice(0, 2);
  }
  const [kind, transport, ...where] = args;
  if (!SESSION.servers[kind] || !["stdio", "http", "sse"].includes(transport) || !where.length) {
    throw new Error("usage: DRIVER [--mode MODE] KIND stdio|http|sse COMMAND...|URL");
  }
  return { kind, transport, where, mode, spec: SESSION.servers[kind], answers: SESSION.answers };
}

export class Observer {
  constructor() {
    this.out = {};
    this.callbacks = [];
    this.logs = [];
    this.connected = false;
  }

  async step(name, action) {
    if (ONLY.size && !ONLY.has(name)) {
      return;
    }
    let timer;
    const deadline = new Promise((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer in ${STEP_TIMEOUT_MS} ms`)), STEP_TIMEOUT_MS);
    });
    try {
      this.out[name] = normalise(await Promise.race([action(), deadline]));
    } catch (err) {
      this.out[name] = { error: oneLine(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  // As in common.py: callbacks in a fixed order (server-everything asks for roots on a
  // timer) with roots requests counted once (it asks once or twice, by timing alone), and
  // progress updates without the final one (progress == total), which races the response in
  // the live run too.
  finish() {
    const plain = normalise(this.callbacks);
    const roots = plain.filter((c) => c.kind === "roots").slice(0, 1);
    const callbacks = plain
      .filter((c) => c.kind !== "roots")
      .concat(roots)
      .map((c) => [JSON.stringify(c), c])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, c]) => c);
    const out = { ...this.out, callbacks, logs: this.logs };
    if (out.progress_updates) {
      out.progress_updates = out.progress_updates.filter(([p, total]) => total === null || p < total);
    }
    return normalise(out);
  }
}

// The scripted session, on a connected client of either SDK generation. `callTool` hides
// the one difference in their signatures.
export async function runScript(client, target, obs, callTool) {
  const { spec } = target;
  const progress = [];
  const names = (items, key) => items.map((item) => String(item[key]));

  await obs.step("set_level", () => client.setLoggingLevel(spec.log_level));
  await obs.step("tools", async () => names((await client.listTools()).tools, "name"));
  await obs.step("resources", async () => names((await client.listResources()).resources, "uri"));
  await obs.step("prompts", async () => names((await client.listPrompts()).prompts, "name"));
  await obs.step("echo", () => callTool({ name: spec.echo.name, arguments: spec.echo.arguments }));
  await obs.step("progress", () =>
    callTool(
      { name: spec.progress.name, arguments: spec.progress.arguments },
      { onprogress: (p) => progress.push([p.progress, p.total ?? null, p.message ?? null]) },
    ),
  );
  obs.out.progress_updates = progress;
  await obs.step("prompt", () => client.getPrompt({ name: spec.prompt.name }));
  await obs.step("prompt_args", () =>
    client.getPrompt({ name: spec.prompt_args.name, arguments: spec.prompt_args.arguments }),
  );
  await obs.step("read", () => client.readResource({ uri: spec.resource }));
  for (const step of ["sampling", "elicitation", "roots", "gated"].filter((k) => spec[k])) {
    await obs.step(step, () => callTool({ name: spec[step].name, arguments: spec[step].arguments }));
  }
}

function emit(result) {
  process.stdout.write(JSON.stringify(normalise(result)) + "\n");
}

// Run SESSION(target, obs) and print what it observed; exit 1 when it could not connect.
export async function main(session) {
  let target;
  try {
    target = parseArgs(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`${oneLine(err)}\n`);
    process.exit(2);
  }
  const obs = new Observer();
  try {
    await session(target, obs);
  } catch (err) {
    emit({ ...obs.finish(), error: oneLine(err), stage: obs.connected ? "session" : "connect" });
    process.exit(1);
  }
  emit(obs.finish());
  process.exit(0);
}
