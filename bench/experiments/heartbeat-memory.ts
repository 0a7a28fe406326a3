// Where does a long-running heartbeat's anonymous RSS go? `tsx bench/experiments/heartbeat-memory.ts
// [minutes] [interval-s] [scrape-s]`: one `edgectl heartbeat` (the unit's NODE_OPTIONS, or
// HEARTBEAT_NODE_OPTIONS) probing a
// loopback origin every `interval` (0.1 s: 20× the soak's 2 s), its /metrics scraped every
// `scrape` seconds; prints every 30 s its RSS, anonymous RSS, CPU time and, from its /metrics, V8 heap
// used, live (after the latest full collection: edge_heartbeat_heap_live_bytes) and total, and
// external memory (Buffers and ArrayBuffers, outside the V8 heap).
// HEARTBEAT_V8_FLAGS go on the heartbeat's node command line (V8 flags NODE_OPTIONS refuses:
// `--no-maglev`, `--trace-opt`); with `--trace-opt` each line also counts the compiles the
// heartbeat finished since the last, by tier; with `--trace-gc`, its full collections (Mark-Compact)
// since the last and the V8 heap used after the newest, the live heap.

import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { startEtcd } from "../../testkit/etcd.js";
import { spawnOwned } from "../../testkit/owned-process.js";
import { freePort } from "../../testkit/ports.js";
import { parsePromText } from "../../testkit/prom-text.js";

const minutes = Number(process.argv[2] ?? 10);
const interval = process.argv[3] ?? "0.1";
const scrapeSeconds = Number(process.argv[4] ?? 1);
const EDGECTL = fileURLToPath(new URL("../../bin/edgectl.js", import.meta.url));
const UNIT = fileURLToPath(new URL("../../deploy/edge-heartbeat@.service", import.meta.url));

/** The unit's `NODE_OPTIONS` (`HEARTBEAT_NODE_OPTIONS` overrides it). */
function deployedHeartbeatOptions(): string {
  return /^Environment="?NODE_OPTIONS=([^"\n]*)"?\s*$/m.exec(readFileSync(UNIT, "utf8"))?.[1] ?? "";
}

const etcd = await startEtcd();
const origin = createServer((_req, res) => {
  res.writeHead(200, { "content-type": "text/plain" });
  res.end("ok");
});
await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
const address = origin.address();
if (address === null || typeof address === "string") throw new Error("no origin port");
const metricsPort = await freePort();
/** Compiles finished since the last line, by tier (with `--trace-opt`). */
const compiles = new Map<string, number>();
/** Full collections since the last line, and the heap used after the newest, MB (with `--trace-gc`). */
const fullGcs = { count: 0, after: Number.NaN };
const hb = spawnOwned(
  "heartbeat",
  process.execPath,
  [
    ...(process.env.HEARTBEAT_V8_FLAGS ?? "").split(" ").filter(Boolean),
    EDGECTL,
    "heartbeat",
    "hb-1",
    "--ttl",
    "10",
    "--interval",
    interval,
    "--check-url",
    `http://127.0.0.1:${address.port}/healthz`,
    "--listen",
    `127.0.0.1:${metricsPort}`,
  ],
  {
    cwd: process.cwd(),
    env: {
      ...process.env,
      ETCD_ENDPOINTS: etcd.endpoint,
      NODE_OPTIONS: process.env.HEARTBEAT_NODE_OPTIONS ?? deployedHeartbeatOptions(),
    },
    outputLimit: 64 * 1024,
    onOutput: (text) => {
      for (const m of text.matchAll(/completed compiling .*?\(target (\w+)\)/g)) {
        const tier = m[1] ?? "?";
        compiles.set(tier, (compiles.get(tier) ?? 0) + 1);
      }
      for (const m of text.matchAll(/Mark-Compact[^\d]*[\d.]+ \([\d.]+\) -> ([\d.]+) \(/g)) {
        fullGcs.count++;
        fullGcs.after = Number(m[1]);
      }
    },
  },
);
const mib = (bytes: number | undefined) => ((bytes ?? 0) / 2 ** 20).toFixed(2);
const proc = (field: string) =>
  Number(
    new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${hb.pid}/status`, "utf8"))?.[1],
  ) * 1024;
/** The heartbeat's CPU time so far, ms (/proc/PID/stat utime + stime, at 100 ticks a second). */
const cpuMs = () => {
  const fields = readFileSync(`/proc/${hb.pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
};
const scrape = async () => {
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  const value = (name: string) => parsePromText(text).find((s) => s.name === name)?.value;
  return {
    used: value("nodejs_heap_size_used_bytes"),
    live: value("edge_heartbeat_heap_live_bytes"),
    total: value("nodejs_heap_size_total_bytes"),
    external: value("nodejs_external_memory_bytes"),
  };
};
try {
  await sleep(3_000);
  const t0 = Date.now();
  let next = 0;
  while (Date.now() - t0 < minutes * 60_000) {
    const m = await scrape();
    if (Date.now() - t0 >= next) {
      next += 30_000;
      console.log(
        `${Math.round((Date.now() - t0) / 1000)} s: rss ${mib(proc("VmRSS"))} anon ${mib(proc("RssAnon"))} MiB; cpu ${cpuMs()} ms; heap used ${mib(m.used)} live ${mib(m.live)} total ${mib(m.total)}; external ${mib(m.external)}${[...compiles].map(([tier, n]) => `; ${n} ${tier}`).join("")}${fullGcs.count > 0 ? `; ${fullGcs.count} full GC, live ${fullGcs.after} MB` : ""}`,
      );
      compiles.clear();
      fullGcs.count = 0;
    }
    await sleep(scrapeSeconds * 1000);
  }
} finally {
  await hb.stop(5_000);
  origin.close();
  await etcd.stop();
}
