// The operator's view of a propagation: `tsx bench/experiments/put-to-status.ts [keys] [changes]`.
// One country change on the growth fixture, a quiet GAP ms after the last, then three clocks
// started at the put: the pusher's `/status.routes_revision` (polled every 5 ms), KV's `routes`
// (polled every 2 ms) and the pusher's `push` log line. SINK=cloudflare for the stand-in;
// NO_STATUS=1 polls KV only; ALTERNATE=1 cycles no poll, a `/livez` poll as often, `/status`.
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { NODE_TARGET, nodeBundlePlugin } from "../../scripts/node-bundle.js";
import { Cleanup } from "../lib/cleanup.js";
import { deployedEnvironment } from "../lib/deployed-environment.js";
import { putOne } from "../lib/etcd-load.js";
import { growthFixture, growthRule } from "../lib/fixture.js";
import { revisionOf } from "../lib/kv-reader.js";
import { pollUntil } from "../lib/poll-until.js";
import { startStack } from "../lib/stack.js";
import { summarize } from "../lib/stats.js";

const keys = Number(process.argv[2] ?? 10_000);
const changes = Number(process.argv[3] ?? 10);
const gap = Number(process.env.GAP ?? 1_900);
const sink = process.env.SINK === "cloudflare" ? "cloudflare" : "local";
// PROBE=1: the pusher runs bench/experiments/pusher-steps-hooks.ts, and each change's steps print.
const probeFile = join(tmpdir(), `edge-probe-${process.pid}.log`);
if (process.env.PROBE) {
  const root = fileURLToPath(new URL("../../", import.meta.url));
  const bundleDir = join(root, ".tmp/put-to-status/");
  await build({
    entryPoints: { hooks: fileURLToPath(new URL("./pusher-steps-hooks.ts", import.meta.url)) },
    outdir: bundleDir,
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: "esm",
    platform: "node",
    target: NODE_TARGET,
    plugins: [nodeBundlePlugin(root)],
    logLevel: "warning",
  });
  process.env.BENCH_PUSHER_ENTRY = join(bundleDir, "hooks.js");
  process.env.BENCH_PUSHER_ENV = JSON.stringify({ PROBE_OUT: probeFile });
}
const starts: number[] = [];
const cleanup = new Cleanup();
const rows: Record<string, number[]> = {
  status: [],
  kv: [],
  logged: [],
  logStart: [],
  "kv (no /status poll)": [],
  "logged (no /status poll)": [],
  "logStart (no /status poll)": [],
  "kv (/livez poll)": [],
  "logged (/livez poll)": [],
  "logStart (/livez poll)": [],
};
try {
  const fixture = growthFixture(keys);
  const pools = fixture.filter((e) => e.rel.startsWith("pool/")).length;
  const stack = await startStack(cleanup, fixture, {
    sink,
    deployed: deployedEnvironment(),
    firstPushTimeoutMs: 90_000,
  });
  const { client, prefix, pusher } = stack;
  const reader = { get: (key: string) => stack.reader.get(key).catch(() => null) };
  for (let i = 0; i < 5; i++) {
    const t = performance.now();
    const res = await fetch(`http://127.0.0.1:${pusher.port}/status`);
    const body = await res.text();
    console.log(`/status: ${body.length} bytes in ${(performance.now() - t).toFixed(1)} ms`);
  }
  for (let i = 0; i < changes; i++) {
    await sleep(gap);
    // PRECEDE_MS=N: a change that leaves routing as it is (a pool's p90) N ms before the timed
    // one: its read and its meta-only write take the slot the timed change then waits for.
    const precede = Number(process.env.PRECEDE_MS ?? 0);
    if (precede > 0) {
      await putOne(
        client,
        `${prefix}health/g00000`,
        JSON.stringify({ status: "healthy", p90_ms: 100 + i + 1 }),
      );
      await sleep(precede);
    }
    const wall0 = Date.now();
    starts.push(performance.timeOrigin + performance.now());
    const t0 = performance.now();
    let rev = Number.POSITIVE_INFINITY;
    void putOne(client, `${prefix}country/DE`, growthRule(i, pools, i + 1)).then((r) => {
      rev = r;
    });
    const [status, kv] = await Promise.all([
      pollUntil(
        async () => {
          const mode = process.env.ALTERNATE ? i % 3 : process.env.NO_STATUS ? 0 : 2;
          if (mode === 0) return -1;
          // A cheap answer polled as often: what the polling costs besides the document.
          const path = mode === 1 ? "/livez" : "/status";
          const text = await (await fetch(`http://127.0.0.1:${pusher.port}${path}`)).text();
          if (mode === 1) return pusher.pushes.some((p) => p.revision >= rev) ? -2 : null;
          const m = /"routes_revision":(\d+)/.exec(text);
          return m && Number(m[1]) >= rev ? performance.now() - t0 : null;
        },
        { timeoutMs: 10_000, intervalMs: 5 },
      ),
      pollUntil(
        async () => {
          const r = revisionOf(await reader.get("routes"));
          return r !== null && r >= rev ? performance.now() - t0 : null;
        },
        { timeoutMs: 10_000, intervalMs: 2 },
      ),
    ]);
    const push = await pusher.waitForRoutes(rev, 5_000);
    const quiet = status === -1 ? " (no /status poll)" : status === -2 ? " (/livez poll)" : "";
    if (!quiet) rows.status?.push(status ?? Number.NaN);
    rows[`kv${quiet}`]?.push(kv ?? Number.NaN);
    rows[`logged${quiet}`]?.push(push ? push.doneAt - wall0 : Number.NaN);
    rows[`logStart${quiet}`]?.push(push ? push.startedAt - wall0 : Number.NaN);
    console.log(
      `change ${i}: status ${status?.toFixed(1)} ms, KV ${kv?.toFixed(1)} ms, push logged ${push ? push.doneAt - wall0 : "?"} ms (started ${push ? push.startedAt - wall0 : "?"}), keys ${push?.keys.join(",")}`,
    );
  }
} finally {
  await cleanup.runAll();
}
if (process.env.PROBE) {
  const marks = readFileSync(probeFile, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" "));
  rmSync(probeFile, { force: true });
  starts.forEach((t0, i) => {
    const end = starts[i + 1] ?? Number.POSITIVE_INFINITY;
    const steps = marks
      .filter((m) => Number(m[1]) >= t0 - 300 && Number(m[1]) < Math.min(end, t0 + 1_000))
      .map(
        (m) => `${m[0]}${m[2] ? `(${m[2].slice(0, 24)})` : ""}@${(Number(m[1]) - t0).toFixed(0)}`,
      );
    console.log(`change ${i}: ${steps.join(" ")}`);
  });
}
for (const [k, v] of Object.entries(rows)) {
  if (v.length === 0) continue;
  const s = summarize(v);
  console.log(
    `${k.padEnd(10)} p50 ${s.p50.toFixed(1)}  p90 ${s.p90.toFixed(1)}  max ${s.max.toFixed(1)}`,
  );
}
