import { setImmediate as turn } from "node:timers/promises";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { LiveHeap, registerLiveHeapGauge } from "../../adapters/live-heap.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as (opts?: { type: "major" | "minor" }) => void;

/** Runs a collection of `type` and waits until observers have its entry. */
async function collect(type: "major" | "minor"): Promise<void> {
  gc({ type });
  for (let i = 0; i < 5; i++) await turn();
}

const MIB = 2 ** 20;
const started: LiveHeap[] = [];
afterEach(() => {
  for (const l of started.splice(0)) l.stop();
});

describe("LiveHeap", () => {
  it("is null until a full collection, then holds the heap used after it", async () => {
    let used = 123;
    const live = new LiveHeap(() => used);
    started.push(live);
    expect(live.bytes()).toBeNull();
    await collect("minor");
    expect(live.bytes()).toBeNull();
    await collect("major");
    expect(live.bytes()).toBe(123);
    used = 456;
    await collect("minor");
    expect(live.bytes()).toBe(123);
    await collect("major");
    expect(live.bytes()).toBe(456);
    expect(live.collections).toBe(2);
  });

  it("follows what the heap keeps, not its garbage", async () => {
    const live = new LiveHeap();
    started.push(live);
    await collect("major");
    const base = live.bytes() ?? Number.NaN;
    let kept: number[][] | null = Array.from({ length: 64 }, () => new Array(40_000).fill(1.5));
    for (let i = 0; i < 64; i++) new Array(40_000).fill(2.5);
    await collect("major");
    const holding = live.bytes() ?? Number.NaN;
    expect(holding - base).toBeGreaterThan(15 * MIB);
    expect(holding - base).toBeLessThan(30 * MIB);
    expect(kept.length).toBe(64);
    kept = null;
    await collect("major");
    expect((live.bytes() ?? Number.NaN) - base).toBeLessThan(3 * MIB);
  });
});

describe("registerLiveHeapGauge", () => {
  it("exports <prefix>_heap_live_bytes: the heap after the latest full collection", async () => {
    const registries = [new Registry(), new Registry()];
    registerLiveHeapGauge(registries[0] as Registry, "edge_a");
    registerLiveHeapGauge(registries[1] as Registry, "edge_b");
    const read = async (r: Registry | undefined, prefix: string) =>
      Number(
        new RegExp(`^${prefix}_heap_live_bytes (\\S+)$`, "m").exec((await r?.metrics()) ?? "")?.[1],
      );
    const own = new LiveHeap();
    started.push(own);
    await collect("major");
    const a = await read(registries[0], "edge_a");
    expect(a).toBeGreaterThan(MIB);
    expect(await read(registries[1], "edge_b")).toBe(a);
    expect(Math.abs(a - (own.bytes() ?? 0))).toBeLessThan(MIB);
  });
});
