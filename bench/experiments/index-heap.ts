// What the pusher's decoded prefix costs in V8's heap, per key. `node --expose-gc --import tsx
// bench/experiments/index-heap.ts [keys]` (default 100,000): the growth fixture, fed as Buffers
// into a RoutingIndex key by key (a first full read), then its state compiled twice (the first
// push and one change). Prints heapUsed after a full GC at each step; the same script runs at
// any commit that has RoutingIndex and compileState, to bisect what a key costs.
import { compileState, RoutingIndex } from "../../core/index.js";
import { growthFixture } from "../lib/fixture.js";

const keys = Number(process.argv[2] ?? 100_000);
const prefix = "/edge/";
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with node --expose-gc");
const mib = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};
const row = (label: string, v: number, base: number) =>
  process.stdout.write(
    `${label.padEnd(22)} ${v.toFixed(1).padStart(7)} MiB  +${(v - base).toFixed(1)} MiB  ${(((v - base) * 2 ** 20) / keys).toFixed(0)} B/key\n`,
  );

const base = mib();
const index = new RoutingIndex(prefix);
{
  let fixture: ReturnType<typeof growthFixture> | null = growthFixture(keys);
  let rev = 1;
  for (const e of fixture.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0)))
    index.upsert({ key: prefix + e.rel, value: Buffer.from(e.value), modRevision: rev++ });
  fixture = null;
}
const afterIndex = mib();
row("index", afterIndex, base);
const opts = {
  carried: null,
  prefix,
  floorPool: "g00000",
  originTemplate: "https://{pool}.example",
  now: new Date(),
};
const t0 = performance.now();
const first = compileState(index.state(), 1, opts);
const compileMs = performance.now() - t0;
const afterFirst = mib();
row("index + first compile", afterFirst, base);
const second = compileState(index.state(), 2, { ...opts, carried: first.map });
const afterSecond = mib();
row("index + two compiles", afterSecond, base);
process.stdout.write(
  `compile ${compileMs.toFixed(0)} ms; countries ${Object.keys(second.map.countries).length}\n`,
);
// A second full read (resync, re-list) into a successor while the index is still current.
{
  const next = index.successor();
  let rev = 1;
  for (const e of growthFixture(keys).sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0)))
    next.upsert({ key: prefix + e.rel, value: Buffer.from(e.value), modRevision: rev++ });
  row("+ a full read's successor", mib(), base);
  next.seal();
}
