import { describe, expect, it } from "vitest";
import { growthFailure, memorySplit } from "../../soak/growth-failure.js";
import type { GrowthVerdict } from "../../soak/no-growth.js";
import type { Sample } from "../../soak/samples.js";

/** 30 minutes every 10 s: m0's peers step 15 → 20 at t=1500; hb's V8 heap steps +4 MiB at 1200. */
function samples(): Sample[] {
  const out: Sample[] = [];
  for (let t = 0; t <= 1800; t += 10) {
    out.push({ t, series: "etcd:m0<-peer", figure: "sockets", value: t >= 1500 ? 20 : 15 });
    out.push({ t, series: "etcd:m0<-other", figure: "sockets", value: 12 });
    out.push({ t, series: "etcd:m0#42", figure: "fds", value: t >= 1500 ? 67 : 62 });
    out.push({ t, series: "heartbeat:p1#7", figure: "anon_mib", value: t >= 1200 ? 35 : 30 });
    out.push({ t, series: "heartbeat:p1#7", figure: "heap_total_mib", value: t >= 1200 ? 24 : 20 });
    out.push({ t, series: "heartbeat:p1#7", figure: "external_mib", value: 1.5 });
  }
  return out;
}

const failed = (figure: GrowthVerdict["figure"], series: string): GrowthVerdict => ({
  figure,
  series,
  status: "fail",
  detail: "rise 5",
  fit: null,
});

describe("growthFailure", () => {
  it("names the holders that rose for an etcd member's descriptors", () => {
    const holders = "highest of the last 5 min against the first 5, by holder: peer +5 (15→20)";
    expect(growthFailure(failed("fds", "etcd:m0#42"), samples(), 900)).toBe(
      `no growth: fds grew in etcd:m0#42: rise 5; ${holders}`,
    );
    expect(growthFailure(failed("fds_less_peers", "etcd:m0#42"), samples(), 900)).toBe(
      `no growth: fds_less_peers grew in etcd:m0#42: rise 5; ${holders}`,
    );
  });

  it("says how much of a Node process's anonymous memory was V8's heap and external memory", () => {
    const text = growthFailure(failed("anon_mib", "heartbeat:p1#7"), samples(), 900);
    expect(text).toMatch(
      /^no growth: anon_mib grew in heartbeat:p1#7: rise 5; of it, V8 heap committed rose (\d+\.\d\d) MiB, external 0\.00 MiB$/,
    );
    // A +4 MiB step two thirds into the window: the fitted line gains more than half of it.
    const v8 = Number(/committed rose (\d+\.\d\d)/.exec(text)?.[1]);
    expect(v8).toBeGreaterThan(2);
    expect(v8).toBeLessThan(6);
  });

  it("adds nothing for other figures, or when nothing was recorded", () => {
    expect(growthFailure(failed("handles", "etcd:m0#42"), samples(), 900)).toBe(
      "no growth: handles grew in etcd:m0#42: rise 5",
    );
    expect(growthFailure(failed("anon_mib", "pusher:a#9@leader"), samples(), 900)).toBe(
      "no growth: anon_mib grew in pusher:a#9@leader: rise 5",
    );
    expect(memorySplit(samples(), "pusher:a#9@leader", 900)).toBeNull();
  });

  it("says which part was not recorded", () => {
    const onlyHeap = samples().filter((s) => s.figure !== "external_mib");
    expect(memorySplit(onlyHeap, "heartbeat:p1#7", 900)).toMatch(/, external not recorded$/);
  });
});
