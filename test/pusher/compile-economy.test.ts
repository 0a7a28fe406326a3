import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { COUNTRY_CODES } from "../../core/index.js";
import { CompileGate } from "../../pusher/compile-gate.js";
import type { PusherUnderTest } from "./harness.js";
import { kvConverged, kvRoutes, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

describe("CompileGate (the compile economy's rule, fake clock)", () => {
  it("lets a trigger after a quiet slot read at once, and holds later ones to the slot's end", () => {
    const gate = new CompileGate(1_000);
    expect(gate.waitMs(10_000)).toBe(0);
    gate.started(10_000);
    expect(gate.waitMs(10_000)).toBe(1_000);
    expect(gate.waitMs(10_300)).toBe(700);
    expect(gate.waitMs(10_999)).toBe(1);
    expect(gate.waitMs(11_000)).toBe(0);
    // A lone change long after the last read is not delayed at all.
    expect(gate.waitMs(25_000)).toBe(0);
  });

  it("does not charge the slot for an urgent read (re-list, resync, shutdown)", () => {
    const gate = new CompileGate(1_000);
    gate.started(5_000, false);
    gate.finished(5_040);
    expect(gate.waitMs(5_100)).toBe(0);
    // Its duration still counts: the next read starts that much before the writer's slot.
    expect(gate.waitMs(5_100, 6_000)).toBe(860);
  });

  it("does not charge the slot for a read that failed", () => {
    const gate = new CompileGate(1_000);
    gate.started(5_000);
    gate.failed();
    expect(gate.waitMs(5_010)).toBe(0);
  });

  it("waits for the writer's next slot, starting one read-and-compile early; forever while a write is in flight", () => {
    const gate = new CompileGate(1_000);
    gate.started(0);
    gate.finished(150);
    // The writer wrote at 100: its next slot is 1,100; the read starts 150 ms before it.
    expect(gate.waitMs(500, 1_100)).toBe(500);
    expect(gate.waitMs(500, 1_600)).toBe(950);
    expect(gate.waitMs(500, Number.POSITIVE_INFINITY)).toBe(Number.POSITIVE_INFINITY);
    // A standby (no writer) only keeps the interval.
    expect(gate.waitMs(500, Number.NEGATIVE_INFINITY)).toBe(500);
  });

  it("gives back the slot of a read that changed no routing, never twice in a row", () => {
    const gate = new CompileGate(1_000);
    gate.started(10_000); // a checker's p90 moved: meta only
    gate.finished(10_020);
    gate.refund();
    // An operator's change 200 ms later reads at once instead of waiting 800 ms.
    expect(gate.waitMs(10_200)).toBe(0);
    gate.started(10_200);
    gate.finished(10_220);
    gate.refund(); // refused: the slot before was given back
    expect(gate.waitMs(10_300)).toBe(900);
    gate.started(11_200);
    gate.refund(); // allowed again after a spent slot
    expect(gate.waitMs(11_300)).toBe(0);
  });

  it("with the economy off (interval 0) never waits", () => {
    const gate = new CompileGate(0);
    gate.started(1);
    expect(gate.waitMs(1)).toBe(0);
  });
});

const ctx = useEtcd();

/** `edge_pusher_range_reads_total`. */
async function rangeReads(p: PusherUnderTest): Promise<number> {
  const metric = await p.pusher.metrics.rangeReads.get();
  return metric.values[0]?.value ?? 0;
}

describe("compile economy in the pusher (real etcd)", () => {
  it("makes at most about one range read per routes write under 100 changes/s, and loses none", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const p = ctx.start({ prefix, electionKey });
    await kvConverged(ctx.client, p.kv, prefix);
    // Past the resync a new leader runs one TTL after its election (one extra read).
    await sleep(2_500);
    const reads0 = await rangeReads(p);
    const t0 = Date.now();
    const codes = [...COUNTRY_CODES].filter((c) => c.length === 2).slice(0, 50);
    const pools = ["fra-1", "ams-1", "par-1"];
    let last = 0;
    const inflight: Promise<void>[] = [];
    // 4 s at 100 changes/s, each its own put (its own watch event).
    for (let i = 0; i < 400; i++) {
      const due = t0 + i * 10;
      const wait = due - Date.now();
      if (wait > 1) await sleep(wait);
      const cc = codes[i % codes.length] ?? "DE";
      const rule = { primary: pools[i % 3] ?? "fra-1", fallbacks: [pools[(i + 1) % 3] ?? "ams-1"] };
      inflight.push(
        ctx.client
          .put(`${prefix}country/${cc}`)
          .value(JSON.stringify(rule))
          .exec()
          .then((res) => {
            last = Math.max(last, Number(res.header.revision));
          }),
      );
    }
    await Promise.all(inflight);
    await kvConverged(ctx.client, p.kv, prefix, last);
    const reads = (await rangeReads(p)) - reads0;
    const writes = p.kv.writesOf("routes").filter((w) => w.at >= t0).length;
    const elapsed = (Date.now() - t0) / 1000;
    // Before the economy every watch event could cost a read: hundreds here.
    expect(writes).toBeGreaterThanOrEqual(2);
    expect(reads).toBeLessThanOrEqual(Math.ceil(elapsed) + 2);
    expect(reads).toBeLessThanOrEqual(Math.ceil(writes * 1.5) + 1);
  }, 60_000);

  it("reads at once for a lone change after a quiet slot (it does not wait for the slot's end)", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    // A 4 s slot: a change held to the slot's end would take seconds; one read at once, far less.
    const p = ctx.start({ prefix, electionKey, tuning: { minWriteIntervalMs: 4_000 } });
    await kvConverged(ctx.client, p.kv, prefix);
    await sleep(4_200);
    const reads0 = await rangeReads(p);
    const t0 = Date.now();
    await ctx.client
      .put(`${prefix}country/DE`)
      .value(JSON.stringify({ primary: "par-1", fallbacks: [] }));
    await waitFor(
      "DE on par-1",
      async () => (await kvRoutes(p.kv))?.countries.DE?.pool === "par-1",
    );
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect((await rangeReads(p)) - reads0).toBe(1);

    // A second change inside the slot waits for its end, and is not lost.
    await ctx.client
      .put(`${prefix}country/DE`)
      .value(JSON.stringify({ primary: "ams-1", fallbacks: [] }));
    await waitFor(
      "DE on ams-1",
      async () => (await kvRoutes(p.kv))?.countries.DE?.pool === "ams-1",
      15_000,
    );
    expect((await rangeReads(p)) - reads0).toBe(2);
  }, 60_000);
});
