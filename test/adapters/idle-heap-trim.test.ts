import { describe, expect, it } from "vitest";
import { IdleHeapTrim } from "../../adapters/idle-heap-trim.js";

const MIB = 1024 * 1024;

/** A process whose clock, CPU time and RSS (`heap`) the test moves; `collect` shrinks it. */
function fakeProcess(
  opts: { heapMb?: number; gcCpuMs?: number; gcMs?: number; holdAfterWorkMs?: number } = {},
) {
  const p = { now: 0, cpuUs: 0, heap: (opts.heapMb ?? 115) * MIB, collects: 0 };
  const trim = new IdleHeapTrim(
    {
      collect: () => {
        p.collects++;
        p.heap = 97 * MIB;
        p.cpuUs += (opts.gcCpuMs ?? 0) * 1000;
        p.now += opts.gcMs ?? 0;
      },
      cpuMicros: () => p.cpuUs,
      rssBytes: () => p.heap,
      now: () => p.now,
    },
    {
      tickMs: 250,
      quietMs: 1_000,
      quietCpuPct: 3,
      minGrowthBytes: 4 * MIB,
      minIntervalMs: 10_000,
      maxTimeShare: 0.01,
      ...(opts.holdAfterWorkMs !== undefined ? { holdAfterWorkMs: opts.holdAfterWorkMs } : {}),
    },
  );
  /** Advances 250 ms using `cpuPct` of a core, then samples. */
  const step = (cpuPct: number) => {
    p.now += 250;
    p.cpuUs += cpuPct * 2_500;
    trim.tick();
  };
  return { p, trim, step };
}

describe("IdleHeapTrim (memory-reducing GC once the pusher goes quiet)", () => {
  it("trims once the last second averaged at most 3 % of a core, never under load", () => {
    const { p, trim, step } = fakeProcess();
    for (let i = 0; i < 40; i++) step(15); // 10 s at 15 % of a core: the sustained load
    expect(p.collects).toBe(0);
    step(1);
    step(1);
    step(1);
    expect(p.collects).toBe(0); // the window still holds 250 ms of the load
    step(1);
    expect(p.collects).toBe(1);
    expect(trim.trims).toBe(1);
  });

  it("a short spike inside the second is averaged out; steady light work is not quiet", () => {
    const spike = fakeProcess();
    for (const pct of [1, 8, 1, 1]) spike.step(pct); // (1 + 8 + 1 + 1) / 4 = 2.75 %
    expect(spike.p.collects).toBe(1);
    const light = fakeProcess();
    for (let i = 0; i < 40; i++) light.step(4);
    expect(light.p.collects).toBe(0);
  });

  it("does not repeat on an idle process; trims again after the RSS grew and the interval passed", () => {
    const { p, step } = fakeProcess({ gcCpuMs: 200 });
    for (let i = 0; i < 4; i++) step(0);
    expect(p.collects).toBe(1);
    // The GC's own 200 ms of CPU is not activity, and an unchanged RSS is not worth a GC.
    for (let i = 0; i < 200; i++) step(0);
    expect(p.collects).toBe(1);
    // A burst grows the heap by 2 MiB: still not worth it.
    p.heap += 2 * MIB;
    for (let i = 0; i < 8; i++) step(50);
    for (let i = 0; i < 8; i++) step(0);
    expect(p.collects).toBe(1);
    // 10 MiB more: trimmed once quiet again.
    p.heap += 10 * MIB;
    for (let i = 0; i < 8; i++) step(50);
    for (let i = 0; i < 3; i++) step(0);
    expect(p.collects).toBe(1);
    step(0);
    expect(p.collects).toBe(2);
  });

  it.each([
    { what: "a 150 ms trim waits 15 s for the next", gcMs: 150, gcCpuMs: 280 },
    {
      what: "a trim that waited for a core counts only its CPU: 3 s of wall, 150 ms of CPU wait 15 s (not 300 s)",
      gcMs: 3_000,
      gcCpuMs: 150,
    },
  ])("spends at most 1 % of the time trimming: $what", ({ gcMs, gcCpuMs }) => {
    const { p, step } = fakeProcess({ gcMs, gcCpuMs });
    for (let i = 0; i < 4; i++) step(0); // t = 1 s: first trim, done at 1 s + gcMs
    expect(p.collects).toBe(1);
    p.heap = 115 * MIB;
    for (let i = 0; i < 59; i++) step(0); // 14.75 s after it ended (past the 10 s minimum interval)
    expect(p.collects).toBe(1);
    step(0); // 15 s after it ended
    expect(p.collects).toBe(2);
  });

  it("waits out the minimum interval between two trims", () => {
    const { p, step } = fakeProcess();
    for (let i = 0; i < 4; i++) step(0); // t = 1 s: first trim
    expect(p.collects).toBe(1);
    p.heap = 115 * MIB;
    for (let i = 0; i < 4; i++) step(50); // busy until t = 2 s
    for (let i = 0; i < 4 * 8; i++) step(0); // quiet until t = 10 s
    expect(p.collects).toBe(1);
    for (let i = 0; i < 4; i++) step(0); // t = 11 s: 10 s after the first
    expect(p.collects).toBe(2);
  });

  it("workDone: a due trim runs right after the work, even under steady load", () => {
    const { p, trim, step } = fakeProcess({ holdAfterWorkMs: 3_000 });
    // A change every second, 20 % of a core: the CPU window never calls this quiet.
    for (let s = 0; s < 3; s++) {
      for (let i = 0; i < 4; i++) step(20);
      expect(p.collects).toBe(0);
    }
    trim.workDone();
    expect(p.collects).toBe(1); // the startup heap, trimmed after the first piece of work
    // Right after it, nothing is due: the interval has not passed and the RSS has not grown.
    p.heap += 10 * MIB;
    for (let s = 0; s < 5; s++) {
      for (let i = 0; i < 4; i++) step(20);
      trim.workDone();
    }
    expect(p.collects).toBe(1);
    for (let s = 0; s < 6; s++) {
      for (let i = 0; i < 4; i++) step(20);
      trim.workDone();
    }
    expect(p.collects).toBe(2); // 10 s after the first, and grown by 10 MiB
    // Not grown again: work alone never repeats it.
    for (let s = 0; s < 30; s++) {
      for (let i = 0; i < 4; i++) step(20);
      trim.workDone();
    }
    expect(p.collects).toBe(2);
  });

  it("holdAfterWorkMs: after reported work, the window's trim waits out the hold", () => {
    /** Work reported at 9 s, not due yet (the 10 s interval); quiet after it. */
    const run = (holdAfterWorkMs: number) => {
      const { p, trim, step } = fakeProcess({ holdAfterWorkMs });
      trim.workDone(); // t = 0: the startup trim
      expect(p.collects).toBe(1);
      p.heap += 10 * MIB;
      for (let i = 0; i < 4 * 9; i++) step(20);
      trim.workDone();
      expect(p.collects).toBe(1);
      const at: number[] = [];
      for (let i = 0; i < 4 * 6; i++) {
        step(0);
        if (p.collects > 1 && at.length === 0) at.push(p.now);
      }
      return at[0];
    };
    expect(run(0)).toBe(10_000); // the interval's end, the window already quiet
    expect(run(3_000)).toBe(12_000); // 3 s after the work
  });
});
