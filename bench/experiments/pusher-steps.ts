// Where does the pusher spend a propagation? `tsx bench/experiments/pusher-steps.ts [changes]`: the bench's
// propagation setup (20 pools, local sink, a second Miniflare polling `routes` every 2 ms), but
// the pusher runs bench/experiments/pusher-steps-hooks.ts, which timestamps each step. Prints
// the p50 of each step's offset from the etcd put and of the gaps between steps. The hooks run
// bundled by esbuild as dist/ is (tsx's keepNames would add a `__name` call to every closure the
// compile creates); PROBE_NODE_ARGS adds node flags (`--cpu-prof`, for instance); PROBE_QUIET_READS=1
// also times the same delta read on the pusher's client every 333 ms, and its event loop's delay.
import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { NODE_TARGET, nodeBundlePlugin } from "../../scripts/node-bundle.js";
import { Cleanup } from "../lib/cleanup.js";
import { putOne } from "../lib/etcd-load.js";
import { growthFixture, growthRule, scaleFixture } from "../lib/fixture.js";
import { revisionOf } from "../lib/kv-reader.js";
import { pollUntil } from "../lib/poll-until.js";
import { startStackRelay } from "../lib/relay-floor.js";
import { startStack } from "../lib/stack.js";
import { summarize } from "../lib/stats.js";

const changes = Number(process.argv[2] ?? 30);
const file = join(tmpdir(), `edge-probe-${process.pid}.log`);
const root = fileURLToPath(new URL("../../", import.meta.url));
const bundleDir = join(root, ".tmp/pusher-steps/");
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
process.env.BENCH_PUSHER_NODE_ARGS = `--expose-gc ${process.env.PROBE_NODE_ARGS ?? ""}`;
process.env.BENCH_PUSHER_ENV = JSON.stringify({
  PROBE_OUT: file,
  ...(process.env.PROBE_QUIET_READS ? { PROBE_QUIET_READS: "1" } : {}),
});
const epoch = () => performance.timeOrigin + performance.now();

const cleanup = new Cleanup();
const samples: Array<{ t0: number; acked: number; seen: number }> = [];
const relayed: Array<{ t0: number; seen: number; event: number; put: number }> = [];
try {
  // PROBE_KEYS=N: the growth fixture of N keys (pools with health keys) instead of 20 pools.
  const keys = Number(process.env.PROBE_KEYS ?? 0);
  const fixture = keys > 0 ? growthFixture(keys) : scaleFixture({ keys: 0, pools: 20 });
  const pools = fixture.filter((e) => e.rel.startsWith("pool/")).length;
  const rule = (i: number) => {
    if (keys > 0) return growthRule(i, pools, i + 1);
    const [primary, fallback] = i % 2 === 0 ? ["p002", "p001"] : ["p001", "p002"];
    return JSON.stringify({ primary, fallbacks: [fallback] });
  };
  const stack = await startStack(cleanup, fixture, { firstPushTimeoutMs: 90_000 });
  const { client, prefix } = stack;
  // A read racing a writer that replaces the value's blob may fail: not seen yet.
  const reader = { get: (key: string) => stack.reader.get(key).catch(() => null) };
  const { relay, probeKey } = await startStackRelay(
    stack,
    (await reader.get("routes")) ?? "",
    cleanup,
  );
  const relayOnce = async (i: number) => {
    const t0 = epoch();
    void putOne(client, probeKey, String(i));
    const seen = await pollUntil(
      async () => ((await reader.get("relay-probe"))?.startsWith(`${i}:`) ? epoch() : null),
      { timeoutMs: 10_000, intervalMs: 2 },
    );
    relayed.push({ t0, seen: seen ?? Number.NaN, event: 0, put: 0 });
  };
  for (let i = 0; i < changes; i++) {
    await sleep(1_050);
    if (i % 4 < 2) await relayOnce(i);
    const t0 = epoch();
    let acked = 0;
    let rev = Number.POSITIVE_INFINITY;
    const revP = putOne(client, `${prefix}country/DE`, rule(i));
    void revP.then((r) => {
      rev = r;
      acked = epoch();
    });
    const seen = await pollUntil(
      async () => {
        const r = revisionOf(await reader.get("routes"));
        return r !== null && r >= rev ? epoch() : null;
      },
      { timeoutMs: 10_000, intervalMs: 2 },
    );
    if (seen === null) throw new Error(`change ${i} never arrived`);
    samples.push({ t0, acked, seen });
    await stack.pusher.waitForRoutes(rev, 10_000);
    if (i % 4 >= 2) await relayOnce(i);
  }
  await sleep(600);
  const report = await relay.report();
  relayed.forEach((r, k) => {
    const s = report[k];
    if (s) Object.assign(r, { event: s.event, put: s.put });
  });
} finally {
  await cleanup.runAll();
}

const gcs: Array<{ t: number; kind: string; ms: number }> = [];
const quietReads: number[] = [];
const marks = readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => {
    const [step = "", t = "0", detail = ""] = l.split(" ");
    if (step === "quietread") quietReads.push(Number(detail));
    if (step === "looplag") console.log(`the pusher's event loop delay p50/p99, ms: ${detail}`);
    if (step === "gc")
      gcs.push({
        t: Number(t),
        kind: detail.split(":")[0] ?? "",
        ms: Number(detail.split(":")[1]),
      });
    return {
      step:
        step + (detail.startsWith("routes") ? ":routes" : detail.startsWith("meta") ? ":meta" : ""),
      t: Number(t),
    };
  });
rmSync(file, { force: true });
const offsets = new Map<string, number[]>();
const add = (k: string, v: number) => offsets.set(k, [...(offsets.get(k) ?? []), v]);
for (const s of samples) {
  add("0 etcd put acked (bench)", s.acked - s.t0);
  add("z routes seen by the poller (bench)", s.seen - s.t0);
  const firsts = new Map<string, number>();
  for (const m of marks) {
    if (m.t < s.t0 || m.t > s.seen + 300) continue;
    if (!firsts.has(m.step)) firsts.set(m.step, m.t - s.t0);
  }
  for (const [k, v] of firsts) add(k, v);
  const done = firsts.get("put:end:routes");
  if (done !== undefined) add("zz seen − routes put end", s.seen - s.t0 - done);
  const inWindow = gcs.filter((g) => g.t >= s.t0 && g.t <= s.seen);
  add(
    "zz GC in put → seen, ms (sum)",
    inWindow.reduce((n, g) => n + g.ms, 0),
  );
  add("zz GC in put → seen, count", inWindow.length);
}
if (quietReads.length > 0) {
  const q = summarize(quietReads);
  console.log(
    `the delta read every 333 ms, on the pusher's client: p50 ${q.p50.toFixed(2)} ms, p90 ${q.p90.toFixed(2)} (n=${q.n})`,
  );
}
const count = (step: string) => marks.filter((m) => m.step === step).length;
console.log(
  `range reads ${count("read:start")}, KV writes ${count("write:start")}, routes puts ${count("put:start:routes")} for ${samples.length} changes (+ the first push)`,
);
const rows = [...offsets].map(([k, v]) => [k, summarize(v)] as const);
rows.sort((a, b) => a[1].p50 - b[1].p50);
console.log(`${samples.length} changes; offsets from the etcd put (first occurrence), ms:`);
for (const [k, s] of rows)
  console.log(
    `  ${k.padEnd(36)} p50 ${s.p50.toFixed(2).padStart(7)}  p90 ${s.p90.toFixed(2).padStart(7)}  n=${s.n}`,
  );
const relayRows: Array<[string, number[]]> = [
  ["relay: watch event", relayed.map((r) => r.event - r.t0)],
  ["relay: KV put done", relayed.map((r) => r.put - r.t0)],
  ["relay: seen by the poller", relayed.map((r) => r.seen - r.t0)],
  ["relay: seen − put end", relayed.map((r) => r.seen - r.put)],
];
for (const [k, v] of relayRows) {
  const s = summarize(v);
  console.log(
    `  ${k.padEnd(36)} p50 ${s.p50.toFixed(2).padStart(7)}  p90 ${s.p90.toFixed(2).padStart(7)}  n=${s.n}`,
  );
}
const kinds = new Map<string, number[]>();
for (const g of gcs) kinds.set(g.kind, [...(kinds.get(g.kind) ?? []), g.ms]);
for (const [k, v] of kinds) {
  const s = summarize(v);
  console.log(`  GC kind ${k}: n=${s.n} p50 ${s.p50.toFixed(2)} max ${s.max.toFixed(2)} ms`);
}
