import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { registerCanaryGauges } from "../../observer/canary-metrics.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { useCliSuite } from "../edgectl/cli-harness.js";
import { canaryRunning, judge, reading } from "./canary-judge-support.js";

const suite = useCliSuite();

describe("the observer's /metrics show the canary it judges (real etcd, docs/reference.md §13)", () => {
  it("role, share, --for, verdict, how long the gates held and each side's figures; a standby says so; nothing once the canary ends", async () => {
    const { env, id } = await canaryRunning(suite, "cm1", "60s");
    let t = Date.now();
    const a = judge(env, "judge-a", () => t);
    const b = judge(env, "judge-b", () => t);
    const registryA = new Registry();
    const registryB = new Registry();
    registerCanaryGauges(registryA, () => a.j.status);
    registerCanaryGauges(registryB, () => b.j.status);
    const scrape = async (r: Registry) => parsePromText(await r.metrics());
    try {
      let s = await scrape(registryA);
      expect(sampleValue(s, "edge_observer_canary_role", { role: "none" })).toBe(1);
      expect(sampleValue(s, "edge_observer_canary_share_percent")).toBe(0);
      expect(s.filter((x) => x.name === "edge_observer_canary_p90_ms")).toEqual([]);

      await a.j.tick(reading(id, t, 60, 60, 300));
      t += 12_000;
      await a.j.tick(reading(id, t, 70, 60, 310));
      s = await scrape(registryA);
      expect(sampleValue(s, "edge_observer_canary_role", { role: "judge" })).toBe(1);
      expect(sampleValue(s, "edge_observer_canary_role", { role: "none" })).toBe(0);
      expect(sampleValue(s, "edge_observer_canary_share_percent")).toBe(10);
      expect(sampleValue(s, "edge_observer_canary_for_seconds")).toBe(60);
      expect(sampleValue(s, "edge_observer_canary_verdict", { verdict: "passing" })).toBe(1);
      expect(sampleValue(s, "edge_observer_canary_verdict", { verdict: "failing" })).toBe(0);
      expect(sampleValue(s, "edge_observer_canary_passing_seconds")).toBe(12);
      expect(sampleValue(s, "edge_observer_canary_samples", { side: "canary" })).toBe(310);
      expect(sampleValue(s, "edge_observer_canary_samples", { side: "stable" })).toBe(310);
      expect(sampleValue(s, "edge_observer_canary_error_ratio", { side: "canary" })).toBe(0);
      const p90 = sampleValue(s, "edge_observer_canary_p90_ms", { side: "canary" }) ?? 0;
      expect(p90).toBeGreaterThanOrEqual(70);
      expect(p90).toBeLessThan(200);

      // too few samples: waiting, and the held time starts again
      await a.j.tick(reading(id, t, 60, 60, 5));
      s = await scrape(registryA);
      expect(sampleValue(s, "edge_observer_canary_verdict", { verdict: "waiting" })).toBe(1);
      expect(sampleValue(s, "edge_observer_canary_passing_seconds")).toBe(0);

      // another observer finds a's judgement: it stands by, with the share but no figures
      await b.j.tick(reading(id, t, 4000, 60));
      s = await scrape(registryB);
      expect(sampleValue(s, "edge_observer_canary_role", { role: "standby" })).toBe(1);
      expect(sampleValue(s, "edge_observer_canary_share_percent")).toBe(10);
      expect(sampleValue(s, "edge_observer_canary_verdict", { verdict: "failing" })).toBe(0);
      expect(s.filter((x) => x.name === "edge_observer_canary_samples")).toEqual([]);

      // a failing gate ends the canary: the judge's gauges go back to none
      t += 1_000;
      await a.j.tick(reading(id, t, 4000, 60));
      s = await scrape(registryA);
      expect(sampleValue(s, "edge_observer_canary_role", { role: "none" })).toBe(1);
      expect(sampleValue(s, "edge_observer_canary_share_percent")).toBe(0);
      expect(s.filter((x) => x.name === "edge_observer_canary_samples")).toEqual([]);
    } finally {
      await a.close();
      await b.close();
    }
  });
});
