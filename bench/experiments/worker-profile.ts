// Where do the routing Worker and the contract floor spend their CPU in workerd, request for
// request? `tsx bench/experiments/worker-profile.ts [rounds] [host]`: the bench's workerd (routing
// `edge.bench`, contract floor `floor.bench`, routing with signing `signed.bench`; every route
// with three attrs); V8's sampling profiler runs in all three isolates through workerd's inspector
// while 16 kept-alive connections load one host at a time, 1 s each, `rounds` times over. Prints
// each isolate's sampled time per request (its JS, the runtime APIs it calls, its GC: a machine
// busy elsewhere stretches all three alike), then the busiest functions of `host`.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, compatibilityDate } from "../../testkit/worker.js";
import { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { bundleContractFloor, edgeWorker, passWorker } from "../lib/workerd.js";

const rounds = Number(process.argv[2] ?? 10);
const detail = process.argv[3] ?? "edge.bench";
const HOSTS = { "edge.bench": "edge", "floor.bench": "floor", "signed.bench": "signed" } as const;
const ATTRS = { "cdn-host": "cdn-eu.example.com", tier: "gold", tokenizer: "de" };
const INSPECTOR_PORT = 9400 + Math.floor(Math.random() * 500);

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

function report(p: Profile): void {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const dt = new Map<number, number>();
  p.samples.forEach((s, i) => {
    dt.set(s, (dt.get(s) ?? 0) + (p.timeDeltas[i] ?? 0));
  });
  const key = (n: ProfileNode) =>
    `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*\//, "")}:${n.callFrame.lineNumber}`;
  const self = new Map<string, number>();
  const incl = new Map<string, number>();
  let all = 0;
  for (const n of p.nodes) {
    const t = dt.get(n.id) ?? 0;
    if (!t) continue;
    all += t;
    self.set(key(n), (self.get(key(n)) ?? 0) + t);
    const seen = new Set<string>();
    for (let id: number | undefined = n.id; id !== undefined; id = parent.get(id)) {
      const m = byId.get(id);
      if (!m) break;
      const k = key(m);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + t);
    }
  }
  const top = (m: Map<string, number>, n: number) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n);
  console.log("self %");
  for (const [k, v] of top(self, 35))
    console.log(`${((v / all) * 100).toFixed(1).padStart(5)}  ${k}`);
  console.log("inclusive %");
  for (const [k, v] of top(incl, 60))
    console.log(`${((v / all) * 100).toFixed(1).padStart(5)}  ${k}`);
}

const cleanup = new Cleanup();
try {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-probe-profile-"));
  cleanup.add("persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(cleanup);
  const withAttrs = (e: FixtureEntry): FixtureEntry =>
    e.rel.startsWith("country/")
      ? { ...e, value: JSON.stringify({ ...JSON.parse(e.value), attrs: ATTRS }) }
      : e;
  await seedLocalRoutes(persistDir, "probe", workerBenchMap("/probe/", origin.url, withAttrs));
  const [edge, floor, date] = await Promise.all([
    bundleForWorkerd(fileURLToPath(new URL("../../worker/index.ts", import.meta.url)), {
      readable: true,
    }),
    bundleContractFloor(),
    compatibilityDate(),
  ]);
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    inspectorPort: INSPECTOR_PORT,
    resourcePersistencePath: localPersistRoot(persistDir),
    cf: false,
    workers: [
      { ...edgeWorker(edge, date, "edge.bench"), kvNamespaces: { ROUTING: "probe" } },
      passWorker(floor, date, "floor.bench", origin.url, "floor"),
      {
        ...edgeWorker(edge, date, "signed.bench"),
        name: "signed",
        kvNamespaces: { ROUTING: "probe" },
        bindings: { ORIGIN_SIGNING_KEY: "bench-signing-key-0123456789abcdef" },
      },
    ],
  });
  cleanup.add("workerd", () => mf.dispose());
  const url = (await mf.ready).origin;
  const sessions = new Map<string, (method: string, params?: object) => Promise<unknown>>();
  for (const [host, name] of Object.entries(HOSTS)) {
    const ws = new WebSocket(`ws://127.0.0.1:${INSPECTOR_PORT}/core:user:${name}`);
    await new Promise((resolve, reject) => {
      ws.onopen = resolve;
      ws.onerror = reject;
    });
    cleanup.add(`inspector ${name}`, () => ws.close());
    let nextId = 1;
    const waiting = new Map<number, (r: unknown) => void>();
    ws.onmessage = (m) => {
      const msg = JSON.parse(String(m.data)) as { id?: number; result?: unknown };
      if (msg.id !== undefined) waiting.get(msg.id)?.(msg.result);
    };
    sessions.set(
      host,
      (method, params = {}) =>
        new Promise<unknown>((resolve) => {
          const id = nextId++;
          waiting.set(id, resolve);
          ws.send(JSON.stringify({ id, method, params }));
        }),
    );
  }
  const load = async (host: string, s: number) =>
    (
      await autocannon({
        url: `${url}/video/segment-1.ts?q=1`,
        connections: 16,
        duration: s,
        headers: { host },
      })
    ).requests.total;
  for (const host of sessions.keys()) await load(host, 1);
  for (const send of sessions.values()) {
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: 50 });
    await send("Profiler.start");
  }
  const served = new Map<string, number>();
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [...sessions.keys()].reverse() : [...sessions.keys()];
    for (const host of order) served.set(host, (served.get(host) ?? 0) + (await load(host, 1)));
  }
  const profiles = new Map<string, Profile>();
  for (const [host, send] of sessions) {
    profiles.set(host, ((await send("Profiler.stop")) as { profile: Profile }).profile);
  }
  for (const [host, p] of profiles) {
    const byId = new Map(p.nodes.map((n) => [n.id, n.callFrame.functionName]));
    let busy = 0;
    let program = 0;
    p.samples.forEach((id, i) => {
      const fn = byId.get(id);
      const dt = p.timeDeltas[i] ?? 0;
      if (fn === "(program)") program += dt;
      else if (fn !== "(idle)") busy += dt;
    });
    const n = served.get(host) ?? 0;
    console.log(
      `${host.padEnd(13)} ${String(n).padStart(6)} requests  ${(busy / n).toFixed(1).padStart(6)} µs/req sampled (+ ${(program / n).toFixed(1)} µs "(program)")`,
    );
  }
  const shown = profiles.get(detail);
  if (shown) report(shown);
} finally {
  await cleanup.runAll();
}
