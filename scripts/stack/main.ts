/**
 * The local stack's process, started by scripts/start-stack.ts: etcd, the seed config, demo
 * origins, heartbeats, the pusher, the Worker and the viewer observer.
 * Ctrl-C or SIGTERM stops everything it started; a component that dies stops the stack (exit 1),
 * except a heartbeat or the observer, which may be killed on purpose: it is reported and the
 * stack exits 1 later.
 * Overrides for tests and side-by-side runs: EDGE_STACK_ETCD_PORT, EDGE_STACK_ETCD_PEER_PORT,
 * EDGE_STACK_WORKER_PORT, EDGE_STACK_PUSHER_PORT, EDGE_STACK_INSPECTOR_PORT,
 * EDGE_STACK_OBSERVER_PORT, EDGE_STACK_DATA_DIR, EDGE_STACK_PERSIST_DIR, EDGE_STACK_SEED,
 * EDGE_STACK_HEARTBEAT_TTL, EDGE_STACK_HEARTBEAT_INTERVAL, EDGE_STACK_READY_TIMEOUT (seconds),
 * EDGE_STACK_DEBUG_TOKEN; ROUTING_PREFIX as everywhere.
 */
import { fileURLToPath } from "node:url";
import { stackConfigFromEnv } from "./config.js";
import { guideLines } from "./guide.js";
import { LocalStack } from "./local-stack.js";
import { PrefixedOutput } from "./output.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const out = new PrefixedOutput(
  process.stdout,
  Boolean(process.stdout.isTTY) && !process.env.NO_COLOR,
);

let cfg: ReturnType<typeof stackConfigFromEnv>;
try {
  cfg = stackConfigFromEnv(process.env, { root, isTty: Boolean(process.stdout.isTTY) });
} catch (e) {
  out.notice((e as Error).message, "error");
  process.exit(2);
}

const stack = new LocalStack(cfg, out);
let stopping: Promise<never> | undefined;

function shutdown(code: number, why: string): Promise<never> {
  stopping ??= (async () => {
    out.notice(`${why}; stopping everything the stack started…`, code === 0 ? "plain" : "error");
    await stack.stop();
    out.notice(code === 0 ? "stopped" : "stopped (exit 1)", code === 0 ? "ok" : "error");
    process.exit(code);
  })();
  return stopping;
}

let firstSignalAt = 0;
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.on(sig, () => {
    // One Ctrl-C arrives several times (terminal, npm, tsx, the launcher): count bursts, and
    // force-kill only when the user insists after a couple of seconds.
    if (firstSignalAt === 0) firstSignalAt = Date.now();
    else if (Date.now() - firstSignalAt > 2_000) {
      out.notice(`${sig} again: killing everything now`, "warn");
      for (const pid of stack.supervisor.pids()) {
        try {
          process.kill(-pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      process.exit(130);
    }
    const lost = stack.lost.length > 0 ? ` (${stack.lost.join(", ")} had died)` : "";
    void shutdown(stack.lost.length > 0 ? 1 : 0, `${sig} received${lost}`);
  });
}

// Children run in their own process groups, so nobody else would stop them if whoever started
// us (npm, tsx, a test) dies without signalling: notice that and clean up.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) void shutdown(1, "parent process exited");
}, 1_000).unref();
process.stdout.on("error", () => void shutdown(1, "stdout closed"));

stack.onFailure((name, detail) => {
  void shutdown(1, `${name} ${detail}`);
});

try {
  const ready = await stack.start();
  out.notice(
    ready.seeded ? `seeded ${cfg.seedFile}` : "kept the routing intent already in etcd",
    "plain",
  );
  const lines = guideLines(cfg, ready);
  out.notice(lines[0] ?? "ready", "ok");
  for (const l of lines.slice(1)) process.stdout.write(`${l}\n`);
} catch (e) {
  if (!stopping) void shutdown(1, `startup failed: ${(e as Error).message}`);
}
