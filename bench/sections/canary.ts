import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { type Canary, CanarySchema, onCanarySide } from "../../core/index.js";
import { AuditRecordSchema } from "../../edgectl/audit/audit-record.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { startOrigins } from "../../testkit/origins.js";
import { freePort } from "../../testkit/ports.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { pollUntil } from "../lib/poll-until.js";
import { startStack } from "../lib/stack.js";
import { round } from "../lib/stats.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const OBSERVE_TOKEN = "bench-canary-observe";
const DEBUG_TOKEN = "bench-canary-debug";
/** The canary's share of BR's viewers (percent). */
const SHARE = 10;
/** BR's viewers: one segment request every 25 ms whatever the last one took (players pace). */
const REQUEST_EVERY_MS = 25;
/** Distinct viewers (rendezvous keys) the requests cycle through. */
const VIEWERS = 1000;
/** What the new shard's cold cache gives BR's viewers: the seeds' incident. */
const SLOW_MS = 4_000;
/** The goals: rolled back within 3 minutes; at most the share + 2 points of viewers hurt. */
const GOAL_MS = 180_000;
const GOAL_POINTS = 2;

/** `canary.*`: a bad canary against the clock and its blast radius (docs/reference.md §13). */
export interface CanaryResult {
  /** `edgectl move BR --canary` started → its judge's rollback committed in etcd. */
  readonly rollback_ms: number;
  /** The same start → the Worker sends no viewer to the slow shard any more. */
  readonly edge_rollback_ms: number;
  readonly goal_ms: number;
  /** Percent of BR's viewers (seen while the canary ran) whose request reached the slow shard. */
  readonly blast_share: number;
  /** The canary's share (percent). */
  readonly share: number;
  readonly blast_goal: number;
  readonly viewers_seen: number;
  readonly viewers_hurt: number;
  readonly min_samples: number;
  readonly requests_per_s: number;
  /** The audit record's reason: the gate that failed, with its figures. */
  readonly reason: string;
}

function fixture(fast: string, slow: string): FixtureEntry[] {
  const v = (x: unknown) => JSON.stringify(x);
  return [
    { rel: "pool/gru-1", value: v({ origin: fast }) },
    { rel: "pool/gru-cold", value: v({ origin: slow }) },
    { rel: "health/gru-1", value: v({ status: "healthy", p90_ms: 60 }) },
    { rel: "health/gru-cold", value: v({ status: "healthy", p90_ms: 60 }) },
    { rel: "country/_default", value: v({ primary: "gru-1", fallbacks: [] }) },
    { rel: "country/BR", value: v({ primary: "gru-1", fallbacks: [] }) },
    { rel: "epoch", value: "1" },
  ];
}

/**
 * The seeds' BR incident as a canary (docs/reference.md §13): the real pusher, etcd, the Worker
 * in workerd with its aggregator (every variable at its default but the origin timeout and
 * hedge, so a 4 s answer is an answer and reaches only the slow shard) following the pusher's
 * KV, and `edgectl observe` at its defaults (10 s polls) judging. BR's viewers, paced at 40
 * requests/s over 1000 rendezvous keys, on gru-1 answering in 20 ms; then `edgectl move BR --to
 * gru-cold --canary 10` with the default gates and `--for`, gru-cold answering after 4 s. Time
 * from that command until its judge's rollback is committed, and the share of BR's viewers that
 * reached gru-cold.
 */
export async function canaryRollback(o: {
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
  readonly minSamples: number;
}): Promise<CanaryResult> {
  const origins = await startOrigins(["gru-1", "gru-cold"]);
  o.cleanup.add("canary origins", () => origins.close());
  origins.get("gru-1").respond(() => ({ status: 200, body: "segment", delayMs: 20 }));
  origins.get("gru-cold").respond(() => ({ status: 200, body: "cold", delayMs: SLOW_MS }));
  const stack = await startStack(
    o.cleanup,
    fixture(origins.get("gru-1").url, origins.get("gru-cold").url),
    { sink: "cloudflare" },
  );
  const auditPrefix = `${stack.prefix.slice(0, -1)}-audit/`;

  const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
  const dir = mkdtempSync(join(tmpdir(), "edge-bench-canary-"));
  o.cleanup.add("canary dir", () => rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const mf = newMiniflare({
    modules: true,
    script,
    compatibilityDate: date,
    bindings: { OBSERVE_TOKEN, DEBUG_TOKEN, ORIGIN_TIMEOUT_MS: "10000", ORIGIN_HEDGE_MS: "10000" },
    kvNamespaces: { ROUTING: "routing" },
    durableObjects: { OBSERVATIONS: { className: "ObservationAggregator", useSQLite: true } },
    cf: false,
    host: "127.0.0.1",
    port,
    resourcePersistencePath: join(dir, "edge"),
  });
  o.cleanup.add("canary workerd", () => mf.dispose());
  await mf.ready;
  const routing = await mf.getKVNamespace("ROUTING");
  // The edge follows the pusher's KV as Cloudflare's would: every new `routes` it stores.
  let following = true;
  const follow = (async () => {
    let last = "";
    while (following) {
      const text = await stack.reader.get("routes");
      if (text && text !== last) {
        await routing.put("routes", text);
        last = text;
      }
      await sleep(100);
    }
  })();
  o.cleanup.add("canary KV follower", async () => {
    following = false;
    await follow;
  });

  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ETCD_ENDPOINTS: stack.etcd.endpoint,
    ROUTING_PREFIX: stack.prefix,
    AUDIT_PREFIX: auditPrefix,
  };
  const observer = spawn(
    process.execPath,
    [`${ROOT}bin/edgectl.js`, "observe", "--edge", `http://127.0.0.1:${port}`],
    { cwd: ROOT, env: { ...env, OBSERVE_TOKEN, EDGECTL_USER: "observer" }, stdio: "ignore" },
  );
  o.cleanup.add("canary observer", async () => {
    if (observer.exitCode !== null || observer.signalCode !== null) return;
    const exited = new Promise((r) => observer.once("exit", r));
    observer.kill("SIGTERM");
    await exited;
  });

  // BR's viewers: each request its own viewer key, over the listener, however long the last took.
  const hurt = new Set<string>();
  const seenDuring = new Set<string>();
  let canaryRunning = false;
  let sent = 0;
  const pending = new Set<Promise<unknown>>();
  const pacer = setInterval(() => {
    const viewer = `viewer-${sent++ % VIEWERS}`;
    const during = canaryRunning;
    const p = fetch(`http://127.0.0.1:${port}/seg/${sent}.ts`, {
      headers: {
        "X-Edge-Debug-Token": DEBUG_TOKEN,
        "X-Edge-Debug-Country": "BR",
        "X-Edge-Debug-Viewer": viewer,
      },
    })
      .then(async (r) => {
        await r.text();
        if (during) seenDuring.add(viewer);
        if (r.headers.get("x-edge-pool") === "gru-cold") hurt.add(viewer);
      })
      .catch(() => undefined);
    pending.add(p);
    void p.finally(() => pending.delete(p));
  }, REQUEST_EVERY_MS);
  o.cleanup.add("canary viewers", async () => {
    clearInterval(pacer);
    await Promise.all(pending);
  });

  const get = (rel: string) => stack.client.get(`${stack.prefix}${rel}`).string();
  // Steady: the observer has written BR's p90 on gru-1, so it polls and holds its lease.
  await until(
    "the observer wrote BR's p90",
    120_000,
    async () => (await get("observed/BR/gru-1")) !== null,
  );

  const t0 = performance.now();
  canaryRunning = true;
  const moved = await runEdgectl(env, [
    "move",
    "BR",
    "--to",
    "gru-cold",
    "--canary",
    String(SHARE),
    "--min-samples",
    String(o.minSamples),
    "--yes",
  ]);
  if (moved.code !== 0)
    throw new Error(`canary: move --canary exited ${moved.code}: ${moved.stderr}`);
  const text = await get("canary/current");
  if (text === null) throw new Error("canary: move --canary wrote no canary/current");
  const canary: Canary = CanarySchema.parse(JSON.parse(text));
  o.log(
    `  canary ${canary.id}: BR to gru-cold for ${SHARE} % of its viewers, --min-samples ${o.minSamples}`,
  );

  let judged = "";
  await until("rolled back", 300_000, async () => {
    const j = await get("canary/judgement");
    if (j !== null && j !== judged) {
      judged = j;
      const { verdict, detail } = JSON.parse(j) as { verdict: string; detail: string };
      o.log(`  +${((performance.now() - t0) / 1000).toFixed(1)} s ${verdict}: ${detail}`);
    }
    return (await get("canary/current")) === null;
  });
  const rollbackMs = performance.now() - t0;
  // The edge: a viewer on the canary's side is routed by the stable rule again.
  const drawn = Array.from({ length: VIEWERS }, (_, i) => `viewer-${i}`).find((v) =>
    onCanarySide(canary, v),
  );
  await until("the edge rolled back", 60_000, async () => {
    const res = await fetch(`http://127.0.0.1:${port}/__edge/route`, {
      headers: {
        "X-Edge-Debug-Token": DEBUG_TOKEN,
        "X-Edge-Debug-Country": "BR",
        "X-Edge-Debug-Viewer": drawn ?? "",
      },
    });
    const body = (await res.json()) as { route?: { pool?: string } };
    return body.route?.pool === "gru-1";
  });
  const edgeMs = performance.now() - t0;
  canaryRunning = false;
  clearInterval(pacer);
  await Promise.all(pending);

  const audit = await stack.client.getAll().prefix(auditPrefix).sort("Key", "Ascend").strings();
  const last = Object.values(audit).at(-1);
  const record = last ? AuditRecordSchema.parse(JSON.parse(last)) : null;
  if (record?.command !== "canary-rollback")
    throw new Error(
      `canary: the last audit record is ${record?.command ?? "none"}, not canary-rollback`,
    );
  const blast = (100 * hurt.size) / Math.max(1, seenDuring.size);
  o.log(`  ${record.reason ?? ""}`);
  o.log(
    `  canary rolled back in ${(rollbackMs / 1000).toFixed(1)} s (edge ${(edgeMs / 1000).toFixed(1)} s); ${hurt.size} of ${seenDuring.size} viewers reached gru-cold (${blast.toFixed(1)} %)`,
  );
  return {
    rollback_ms: round(rollbackMs, 0),
    edge_rollback_ms: round(edgeMs, 0),
    goal_ms: GOAL_MS,
    blast_share: round(blast, 2),
    share: SHARE,
    blast_goal: SHARE + GOAL_POINTS,
    viewers_seen: seenDuring.size,
    viewers_hurt: hurt.size,
    min_samples: o.minSamples,
    requests_per_s: 1000 / REQUEST_EVERY_MS,
    reason: record.reason ?? "",
  };
}

/** Polls `ok` every 200 ms until it holds; throws naming `what` after `timeoutMs`. */
async function until(what: string, timeoutMs: number, ok: () => Promise<boolean>): Promise<void> {
  const done = await pollUntil(async () => ((await ok().catch(() => false)) ? true : null), {
    timeoutMs,
    intervalMs: 200,
  });
  if (done === null) throw new Error(`canary: never ${what} (${timeoutMs / 1000} s)`);
}

function runEdgectl(
  env: Record<string, string>,
  argv: readonly string[],
): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [`${ROOT}bin/edgectl.js`, ...argv], {
      cwd: ROOT,
      env: { ...env, EDGECTL_USER: "sre" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    child.on("exit", (code) => done({ code: code ?? 1, stderr }));
  });
}
