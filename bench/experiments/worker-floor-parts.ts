// What does the docs/reference.md §4 contract itself cost in workerd? `tsx bench/experiments/worker-floor-parts.ts
// [cycles]`: the Worker section's sliced load (16 kept-alive connections, 100 ms slices, mirrored
// cycles) over the pass-through, the contract floor doing only its country read (`cf`), only its
// response rebuild (`headers`), both (`floor`), the routing Worker and a second pass-through
// (`control`). Prints each side's rate, workerd CPU per request and its paired ratio to the
// pass-through with the 95 % interval.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import { Cleanup } from "../lib/cleanup.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { childPids, commName } from "../lib/proc.js";
import {
  pairedRatio,
  SLICE,
  sideCpuUs,
  sideRate,
  slicedLoad,
  tallyOf,
} from "../lib/sliced-load.js";
import { processRunSeconds } from "../lib/thread-cpu.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { bundleContractFloor, bundlePassthrough, edgeWorker, passWorker } from "../lib/workerd.js";

const cycles = Number(process.argv[2] ?? 150);
const NAMESPACE = "probe-floor";
const cleanup = new Cleanup();
try {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-probe-floor-"));
  cleanup.add("persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(cleanup);
  await seedLocalRoutes(persistDir, NAMESPACE, workerBenchMap("/probe/floor/", origin.url));

  const [edge, pass, floor, date] = await Promise.all([
    bundleWorker(),
    bundlePassthrough(),
    bundleContractFloor(),
    compatibilityDate(),
  ]);
  const sides = ["pass", "cf", "headers", "floor", "routing", "control"] as const;
  const before = new Set(childPids(process.pid));
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    resourcePersistencePath: localPersistRoot(persistDir),
    cf: false,
    workers: [
      { ...edgeWorker(edge, date, "routing.probe"), kvNamespaces: { ROUTING: NAMESPACE } },
      passWorker(pass, date, "pass.probe", origin.url),
      passWorker(pass, date, "control.probe", origin.url, "control"),
      passWorker(floor, date, "cf.probe", origin.url, "cf", { PARTS: "cf" }),
      passWorker(floor, date, "headers.probe", origin.url, "headers", { PARTS: "headers" }),
      passWorker(floor, date, "floor.probe", origin.url, "floor"),
    ],
  });
  cleanup.add("workerd", () => mf.dispose());
  const url = (await mf.ready).origin;
  const mine = childPids(process.pid).filter(
    (p) => !before.has(p) && commName(p).startsWith("workerd"),
  );
  const load = await slicedLoad({
    url: `${url}/video/segment-1.ts?q=1`,
    connections: 16,
    sides: sides.map((name) => ({ name, headers: { host: `${name}.probe` } })),
    cycles,
    sliceMs: SLICE.sliceMs,
    guardMs: SLICE.guardMs,
    warmupMs: SLICE.warmupMs,
    cpuSeconds: () => mine.reduce((s, p) => s + processRunSeconds(p), 0),
  });
  const base = tallyOf(load, "pass");
  console.log(`${cycles} cycles, errors ${load.errors}, timeouts ${load.timeouts}`);
  for (const name of sides) {
    const t = tallyOf(load, name);
    const r = pairedRatio(t, base);
    const ci = r.ci95.map((x) => x.toFixed(3)).join("–");
    console.log(
      `${name.padEnd(8)} ${sideRate(t).toFixed(0).padStart(5)} req/s  workerd ${sideCpuUs(t).toFixed(0).padStart(4)} µs/req  ÷ pass-through ${r.p50.toFixed(3)} (${ci})${t.non2xx ? `  ${t.non2xx} non-2xx` : ""}`,
    );
  }
} finally {
  await cleanup.runAll();
}
