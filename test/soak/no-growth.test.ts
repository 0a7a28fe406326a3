import { describe, expect, it } from "vitest";
import { floorPoints, GROWTH_GOALS, judgeGrowth, windowOptions } from "../../soak/no-growth.js";
import type { Figure, Sample } from "../../soak/samples.js";

/** A quick run: 300 s, sampled every 10 s; the judged half is 150–300 s. */
const QUICK = windowOptions(300);

function series(figure: Figure, name: string, value: (t: number) => number, age0 = 0): Sample[] {
  return Array.from({ length: 31 }, (_, i) => i * 10).map((t) => ({
    t,
    series: name,
    figure,
    value: value(t),
    age: age0 + t,
  }));
}

const verdict = (samples: Sample[]) => judgeGrowth(samples, GROWTH_GOALS, QUICK);

describe("no-growth test over the second half", () => {
  it("a lease kept every minute (the planted leak) fails leases_held in a 5-minute run", () => {
    // 28 leases, one more at 30, 90, 150, 210, 270 s; a killed heartbeat's lease lingers one
    // sample after each minute's kill.
    const held = series("leases_held", "cluster", (t) => {
      const planted = Math.floor((t + 30) / 60);
      const lingering = t % 60 === 10 && t > 60 ? 1 : 0;
      return 28 + planted + lingering;
    });
    const [v] = verdict(held);
    expect(v?.status).toBe("fail");
    expect(v?.figure).toBe("leases_held");
  });

  it("the same run without the leak passes, lingering leases after kills and all", () => {
    const held = series("leases_held", "cluster", (t) => 28 + (t % 60 === 10 && t > 60 ? 1 : 0));
    expect(verdict(held)[0]?.status).toBe("pass");
  });

  it("a bounded set of series appearing once (a GC kind) is within tolerance; one per 10 s is not", () => {
    const once = series("series", "pusher:a#1@leader", (t) => 120 + (t >= 220 ? 2 : 0));
    expect(verdict(once)[0]?.status).toBe("pass");
    const perPool = series("series", "pusher:a#1@leader", (t) => 120 + Math.floor(t / 10) * 4);
    expect(verdict(perPool)[0]?.status).toBe("fail");
  });

  it("handles stepping up by the tolerance late in the window pass; one more fails, as does a steady leak", () => {
    // A heartbeat in a quick soak: 4 handles, then two connections open near the end.
    const step = series(
      "handles",
      "heartbeat:p16#7",
      (t) => 4 + (t >= 240 ? 1 : 0) + (t >= 260 ? 1 : 0),
    );
    const [v] = verdict(step);
    expect(v?.fit?.rise).toBeGreaterThan(2);
    expect(v?.fit?.range).toBe(2);
    expect(v?.status).toBe("pass");
    const three = series(
      "handles",
      "heartbeat:p16#7",
      (t) => 4 + (t >= 240 ? 1 : 0) + (t >= 260 ? 2 : 0),
    );
    expect(verdict(three)[0]?.status).toBe("fail");
    const leak = series("handles", "heartbeat:p16#7", (t) => 4 + Math.floor(t / 40));
    expect(verdict(leak)[0]?.status).toBe("fail");
  });

  it("workerd's descriptors: its connection pool coming and going passes; a steady leak fails", () => {
    // Connections to origins and clients opened over the judged half (the quick run: 2.5 → 16).
    const pool = series(
      "fds",
      "workerd#9",
      (t) => 30 + (t >= 150 ? Math.min(14, (t - 150) / 10) : 0),
    );
    expect(verdict(pool)[0]?.status).toBe("pass");
    const leak = series("fds", "workerd#9", (t) => 30 + t / 4);
    expect(verdict(leak)[0]?.status).toBe("fail");
    // A Node process gets no such allowance.
    const node = series(
      "fds",
      "pusher:a#1@leader",
      (t) => 30 + (t >= 150 ? Math.min(14, (t - 150) / 10) : 0),
    );
    expect(verdict(node)[0]?.status).toBe("fail");
  });

  it("an etcd member is judged on its descriptors less its peers': a client's leak fails, rafthttp's connections are not judged", () => {
    const clientLeak = series("fds_less_peers", "etcd:m1#5", (t) => 40 + Math.floor(t / 40));
    expect(verdict(clientLeak)[0]?.status).toBe("fail");
    expect(verdict(series("fds_less_peers", "etcd:m1#5", () => 40))[0]?.status).toBe("pass");
    // Its peers reconnecting after a member's restart: total descriptors step by 3.
    expect(verdict(series("fds", "etcd:m1#5", (t) => 58 + (t >= 200 ? 3 : 0)))).toEqual([]);
  });

  it("RSS in a 5-minute run: GC noise passes, gross growth (400 MiB/h) fails, less is below its noise floor", () => {
    const noisy = series("anon_mib", "heartbeat:p02#7", (t) => 60 + ((t * 7919) % 13) / 4);
    expect(verdict(noisy)[0]?.status).toBe("pass");
    const leaking = series("anon_mib", "pusher:a#1@leader", (t) => 80 + (t / 3600) * 400);
    expect(verdict(leaking)[0]?.status).toBe("fail");
    const small = series("anon_mib", "pusher:a#1@leader", (t) => 80 + (t / 3600) * 100);
    expect(verdict(small)[0]?.status).toBe("pass");
  });

  it("heap over a 30-minute run: a sawtooth passes; the same sawtooth on 20 MiB/h fails (fitted on each minute's floor)", () => {
    const long = (perHour: number): Sample[] =>
      Array.from({ length: 181 }, (_, i) => i * 10).map((t) => ({
        t,
        series: "pusher:a#1@leader",
        figure: "heap_mib" as const,
        // Collected every 70 s, 6 MiB allocated in between.
        value: 25 + ((t % 70) / 70) * 6 + (t / 3600) * perHour,
        age: t + 100,
      }));
    const opts = windowOptions(1800);
    expect(judgeGrowth(long(0), GROWTH_GOALS, opts)[0]?.status).toBe("pass");
    const [v] = judgeGrowth(long(20), GROWTH_GOALS, opts);
    expect(v?.status).toBe("fail");
    // 15 minutes of whole bins: the last sample, on the edge, counts in the fifteenth
    expect(v?.fit?.n).toBe(15);
  });

  it("a heartbeat whose memory still settles is judged as a short series: only a gross rise fails", () => {
    // A one-off step of 4 MiB in the window, as V8 compiles the heartbeat's loop.
    const stepped = (series: string, startedAt: number, step: number): Sample[] =>
      Array.from({ length: 181 }, (_, i) => i * 10).map((t) => ({
        t,
        series,
        figure: "anon_mib" as const,
        value: 34 + (t >= 1300 ? step : 0),
        age: t - startedAt,
      }));
    const opts = windowOptions(1800, { heartbeat: 900 });
    const judged = (s: Sample[]) => judgeGrowth(s, GROWTH_GOALS, opts)[0];
    // Started at 0: settled across the window (age ≥ 900), so the step fails at 1 MiB/h.
    expect(judged(stepped("heartbeat:p02#1", 0, 4))?.status).toBe("fail");
    // Restarted at 600 s: settling until 1,500 s, so only a rise over 10 MiB fails.
    const young = judged(stepped("heartbeat:p03#2", 600, 4));
    expect(young?.status).toBe("pass");
    expect(young?.detail).toContain("still settling");
    expect(judged(stepped("heartbeat:p03#2", 600, 14))?.status).toBe("fail");
    // Settling is by kind: a pusher of the same age is judged at 1 MiB/h.
    expect(judged(stepped("pusher:a#1@leader", 600, 4))?.status).toBe("fail");
  });

  it("an observer whose settled samples span 10 minutes is fitted on those alone, at 1 MiB/h", () => {
    // Restarted at 127 s: its heap fills with the edge's pairs until 1,147 s, then holds or creeps.
    const observer = (afterPerHour: number): Sample[] =>
      Array.from({ length: 181 }, (_, i) => i * 10).map((t) => ({
        t,
        series: "observer#7",
        figure: "heap_mib" as const,
        value: 20 + Math.min(t - 127, 1020) / 150 + (Math.max(0, t - 1147) / 3600) * afterPerHour,
        age: t - 127,
      }));
    const opts = windowOptions(1800, { observer: 1020 });
    const judged = (s: Sample[]) => judgeGrowth(s, GROWTH_GOALS, opts)[0];
    const filling = judged(observer(0));
    // fitted on every sample of the second half, the filling alone fails
    expect(judgeGrowth(observer(0), GROWTH_GOALS, windowOptions(1800))[0]?.status).toBe("fail");
    expect(filling?.status).toBe("pass");
    expect(filling?.detail).toContain("settled samples");
    expect(filling?.detail).not.toContain("noise floor");
    expect(judged(observer(3))?.status).toBe("fail");
    // restarted later, its settled samples span under 10 minutes: judged as settling
    const late = judgeGrowth(
      observer(0).map((x) => ({ ...x, age: (x.age ?? 0) - 300 })),
      GROWTH_GOALS,
      opts,
    )[0];
    expect(late?.detail).toContain("still settling");
  });

  it("floor points: each bin's lowest sample, only when the window holds 6 bins", () => {
    const pts = Array.from({ length: 14 }, (_, i) => ({ x: i * 30, y: i % 2 === 0 ? 10 + i : 50 }));
    expect(floorPoints(pts, 60)).toEqual(
      Array.from({ length: 7 }, (_, b) => ({ x: 30 + 60 * b, y: 10 + 2 * b })),
    );
    expect(floorPoints(pts.slice(0, 6), 60)).toHaveLength(6);
  });

  it("leaves out a process's warm-up, and does not judge a series with too few samples", () => {
    // Started at t = 200 s: only its samples from 260 s on count, 5 of them.
    const young = series("fds", "pusher:c#3@standby", (t) => 20 + t, -200).filter(
      (s) => (s.age ?? 0) >= 0,
    );
    const [v] = verdict(young);
    expect(v?.status).toBe("short");
    expect(v?.detail).toContain("5 samples");
    // Started at t = 250 s: nothing left after its warm-up.
    const younger = series("fds", "pusher:d#4@standby", (t) => 20 + t, -250).filter(
      (s) => (s.age ?? 0) >= 0,
    );
    expect(verdict(younger)).toEqual([]);
  });

  it("judges only the kinds a goal names (the harness and workerd's RSS are not judged)", () => {
    expect(verdict(series("rss_mib", "harness", (t) => t))).toEqual([]);
    expect(verdict(series("rss_mib", "workerd#9", (t) => t))).toEqual([]);
    // The Worker's own memory is: its isolate's heap.
    expect(verdict(series("heap_mib", "worker:edge", (t) => 5 + t / 10))[0]?.status).toBe("fail");
  });

  it("observed/ keys sawing with the minute pass; 20 more every 30 s (the planted leak) fail", () => {
    // the observer's window is the current and the previous minute: the count saws each minute
    const saw = (t: number) => 60 + ((t % 60) / 60) * 80;
    expect(verdict(series("observed_keys", "cluster", saw))[0]?.status).toBe("pass");
    const planted = (t: number) => saw(t) + 20 * Math.floor((t + 13) / 30);
    expect(verdict(series("observed_keys", "cluster", planted))[0]?.status).toBe("fail");
  });

  it("the aggregator's storage is judged only past its 17 minutes of filling; then growth fails", () => {
    // a quick run: workerd is at most 5 minutes old, the storage fills all along
    const filling = series("do_storage_mib", "aggregator", (t) => 0.4 + t * 0.003);
    const [quick] = verdict(filling);
    expect(quick?.status).toBe("short");
    expect(quick?.detail).toContain("younger than 1020 s");
    // a 30-minute run: filled at 17 minutes, then flat, or still growing as if never pruned
    const long = windowOptions(1800);
    const at = (value: (t: number) => number) =>
      Array.from({ length: 181 }, (_, i) => i * 10).map((t) => ({
        t,
        series: "aggregator",
        figure: "do_storage_mib" as const,
        value: value(t),
        age: t + 30,
      }));
    const plateau = at((t) => 0.4 + Math.min(t, 990) * 0.003);
    expect(judgeGrowth(plateau, GROWTH_GOALS, long)[0]?.status).toBe("pass");
    const unpruned = at((t) => 0.4 + t * 0.003);
    expect(judgeGrowth(unpruned, GROWTH_GOALS, long)[0]?.status).toBe("fail");
  });

  it("judges the observer's anonymous memory on the common floor: a 42 MiB climb fails a quick run", () => {
    const climb = (t: number) => 100 + Math.max(0, t - 150) * 0.3;
    const [observer] = verdict(series("anon_mib", "observer#9", climb, 60));
    // fitted on the floors of 25-second bins, each a sample behind the climb
    expect(observer?.fit?.rise).toBeGreaterThan(35);
    expect(observer?.status).toBe("fail");
    expect(observer?.detail).toContain("noise floor 10");
    const flat = (t: number) => 100 + Math.sin(t / 7);
    expect(verdict(series("anon_mib", "observer#9", flat, 60))[0]?.status).toBe("pass");
  });

  it("a quick run fits through the floors of a sixth of its span: one-sample spikes late in the window pass, a climb under them fails", () => {
    // the observer: flat, with a poll's native memory held at single samples late in the window
    const spikes: Record<number, number> = { 220: 11, 260: 20, 280: 25, 300: 30 };
    const spiky = (t: number) => 55 + (spikes[t] ?? 0);
    const [observer] = verdict(series("anon_mib", "observer#9", spiky, 60));
    expect(observer?.status).toBe("pass");
    expect(observer?.detail).toContain("fitted on");
    // on every sample the same series rises past the noise floor
    const raw = judgeGrowth(series("anon_mib", "observer#9", spiky, 60), GROWTH_GOALS, {
      ...QUICK,
      minFloorBinSeconds: 1_000,
    })[0];
    expect(raw?.fit?.rise).toBeGreaterThan(10);
    expect(raw?.status).toBe("fail");
    const climbing = (t: number) => spiky(t) + Math.max(0, t - 150) * 0.12;
    expect(verdict(series("anon_mib", "observer#9", climbing, 60))[0]?.status).toBe("fail");
  });
});
