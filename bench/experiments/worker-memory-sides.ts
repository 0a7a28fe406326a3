// Does one Worker hold memory per request that another does not? `tsx
// bench/experiments/worker-memory-sides.ts [sides] [requests]`: the routing and pass-through
// Workers in one workerd (with the inspector), `requests` closed-loop requests (16 connections)
// per phase to each side named in `sides` in turn (default `pass,routing`; `routing,routing,…`
// loads one side only); after each phase workerd's RSS and every isolate's heap (used/committed
// MiB, Miniflare's own isolates included), and 2 s later `smaps_rollup`.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { freePort } from "../../testkit/ports.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import { Cleanup } from "../lib/cleanup.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { childPids, commName } from "../lib/proc.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { bundlePassthrough, EDGE_HOST, edgeWorker, PASS_HOST, passWorker } from "../lib/workerd.js";

const c = new Cleanup();
const order = (process.argv[2] ?? "pass,routing").split(",");
const n = Number(process.argv[3] ?? 20000);
try {
  const persistDir = mkdtempSync(join(tmpdir(), "mem-probe-"));
  const origin = await startOriginProcess(c);
  await seedLocalRoutes(persistDir, "ns", workerBenchMap("/m/", origin.url));
  const [e, p, d] = await Promise.all([bundleWorker(), bundlePassthrough(), compatibilityDate()]);
  const inspectorPort = await freePort();
  const before = new Set(childPids(process.pid));
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    inspectorPort,
    resourcePersistencePath: localPersistRoot(persistDir),
    cf: false,
    workers: [
      { ...edgeWorker(e, d, EDGE_HOST), kvNamespaces: { ROUTING: "ns" } },
      passWorker(p, d, PASS_HOST, origin.url),
    ],
  });
  c.add("mf", () => mf.dispose());
  const base = (await mf.ready).origin;
  const workerd = childPids(process.pid).find(
    (q) => !before.has(q) && commName(q).startsWith("workerd"),
  )!;
  const targets = (await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json()) as Array<{
    id: string;
    title: string;
    webSocketDebuggerUrl: string;
  }>;
  console.log("targets:", targets.map((t) => t.id).join(" "));
  const kib = (f: string) =>
    Number(
      new RegExp(`^${f}:\\s+(\\d+)`, "m").exec(
        readFileSync(`/proc/${workerd}/status`, "utf8"),
      )?.[1],
    ) / 1024;
  const heapAll = async () => {
    const out: string[] = [];
    for (const t of targets) {
      const ws = new WebSocket(`ws://127.0.0.1:${inspectorPort}/${t.id}`);
      await new Promise((r, j) => {
        ws.onopen = r;
        ws.onerror = j;
      });
      const r = await new Promise<{ usedSize: number; totalSize: number } | null>((res) => {
        const timer = setTimeout(() => res(null), 3000);
        ws.onmessage = (m) => {
          clearTimeout(timer);
          res(JSON.parse(String(m.data)).result);
        };
        ws.send(JSON.stringify({ id: 1, method: "Runtime.getHeapUsage" }));
      });
      ws.close();
      out.push(
        `${t.id}: ${r ? `${(r.usedSize / 1048576).toFixed(1)}/${(r.totalSize / 1048576).toFixed(1)}` : "?"}`,
      );
    }
    return out.join(", ");
  };
  const url = `${base}/video/segment-1.ts?q=1`;
  const smaps = () => {
    const t = readFileSync(`/proc/${workerd}/smaps_rollup`, "utf8");
    return t
      .split("\n")
      .filter((l) => /^(Rss|Anonymous|Private_Dirty):/.test(l))
      .join(" ")
      .replace(/\s+/g, " ");
  };
  console.log(
    `start: RSS ${kib("VmRSS").toFixed(0)} anon ${kib("RssAnon").toFixed(0)} | ${await heapAll()}`,
  );
  for (const side of order) {
    const host = side === "pass" ? PASS_HOST : EDGE_HOST;
    const r = await autocannon({ url, connections: 16, amount: n, headers: { host } });
    console.log(
      `${side} ${r.requests.total} req (${r.non2xx} non2xx): RSS ${kib("VmRSS").toFixed(0)} anon ${kib("RssAnon").toFixed(0)} | ${await heapAll()}`,
    );
    await sleep(2000);
    console.log(`  +2s: RSS ${kib("VmRSS").toFixed(0)} | ${smaps()}`);
  }
} finally {
  await c.runAll();
}
