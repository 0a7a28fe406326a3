// What one /metrics scrape costs in V8's heap at a large prefix. `node --expose-gc --import tsx
// bench/experiments/metrics-heap.ts [keys] [stream]` (default 100,000): the growth fixture
// compiled, the pusher's registry fed that compile, then scraped, whole (`registry.metrics()`) or
// with `stream` one metric at a time as the pusher answers; prints heapUsed after GC before and
// after, the peak seen during the scrape (garbage included), the text's size, and what the
// registry keeps.
import { compileState, RoutingIndex } from "../../core/index.js";
import { createMetrics } from "../../pusher/metrics.js";
import { PusherStatus } from "../../pusher/status.js";
import { growthFixture } from "../lib/fixture.js";

const keys = Number(process.argv[2] ?? 100_000);
const stream = process.argv[3] === "stream";
const prefix = "/edge/";
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const mib = (collect = true) => {
  if (collect) {
    gc();
    gc();
  }
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const index = new RoutingIndex(prefix);
let rev = 1;
for (const e of growthFixture(keys).sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0)))
  index.upsert({ key: prefix + e.rel, value: Buffer.from(e.value), modRevision: rev++ });
const result = compileState(index.state(), rev, {
  carried: null,
  prefix,
  floorPool: "g00000",
  originTemplate: "https://{pool}.example",
  now: new Date(),
});
const status = new PusherStatus("probe", { now: () => Date.now() } as never);
const metrics = createMetrics(status);
const before = mib();
metrics.compiled(result);
const fed = mib();
let peak = 0;
const sampler = setInterval(() => {
  peak = Math.max(peak, mib(false));
}, 1);
const t0 = performance.now();
let textMib = 0;
if (stream) {
  // As pusher/metrics-response.ts answers: one metric's text at a time, each let go once sent.
  for (const m of metrics.registry.getMetricsAsArray()) {
    const one = await metrics.registry.getSingleMetricAsString(m.name);
    textMib += one.length / 2 ** 20;
    peak = Math.max(peak, mib(false));
  }
} else {
  const text = await metrics.registry.metrics();
  textMib = text.length / 2 ** 20;
  peak = Math.max(peak, mib(false));
}
const scrapeMs = performance.now() - t0;
clearInterval(sampler);
await new Promise((r) => setTimeout(r, 10));
const after = mib();
process.stdout.write(
  `${stream ? "streamed" : "whole"}: fed ${(fed - before).toFixed(1)} MiB; scrape ${scrapeMs.toFixed(0)} ms, ${textMib.toFixed(1)} MiB of text, ` +
    `heap peak +${(peak - fed).toFixed(1)} MiB (sampled), kept after +${(after - fed).toFixed(1)} MiB\n`,
);
