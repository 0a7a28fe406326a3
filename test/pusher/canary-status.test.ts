import { describe, expect, it } from "vitest";
import type { CanaryJudgement } from "../../core/index.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { canaryDoc } from "../helpers/canary-doc.js";
import { kvConverged, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const suite = useEtcd();

describe("the pusher's /status and /metrics show the running canary (real etcd, docs/reference.md §13)", () => {
  it("share, age, verdict and figures while judged; frozen once the judgement goes; nothing once it ends", async () => {
    const { client } = suite;
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = suite.start({ prefix, electionKey });
    await kvConverged(client, p.kv, prefix);
    const scrape = async () => parsePromText(await p.pusher.metrics.registry.metrics());
    expect(p.pusher.status.document().canary).toBeNull();
    expect(sampleValue(await scrape(), "edge_pusher_canary_running")).toBe(0);

    const started = new Date(Date.now() - 120_000).toISOString();
    const canary = canaryDoc(
      { "country/DE": { primary: "ams-1", fallbacks: [] } },
      { id: "c9", epoch: 9, share: 15, for_s: 300, started_at: started },
    );
    const judgement: CanaryJudgement = {
      id: "c9",
      verdict: "passing",
      judged_at: new Date().toISOString(),
      passing_since: new Date(Date.now() - 30_000).toISOString(),
      canary: { samples: 240, error_ratio: 0.01, p90_ms: 250 },
      stable: { samples: 1300, error_ratio: 0.005, p90_ms: 200 },
      countries: ["DE"],
      minutes: 2,
      detail: "gates hold: …",
      judge: "obs-1:42 observing https://edge.example.com",
    };
    await client.put(`${prefix}canary/current`).value(JSON.stringify(canary));
    await client.put(`${prefix}canary/judgement`).value(JSON.stringify(judgement));
    const judged = await waitFor("canary on /status", () => {
      const c = p.pusher.status.document().canary;
      return c?.verdict === "passing" ? c : null;
    });
    expect(judged).toMatchObject({
      id: "c9",
      share: 15,
      for_s: 300,
      state: "judging",
      frozen: null,
      passing_since: judgement.passing_since,
      canary_side: judgement.canary,
      stable_side: judgement.stable,
    });
    expect(judged.age_s).toBeGreaterThanOrEqual(120);
    // a judgement is not a routing problem
    expect(p.pusher.status.document().problems).toEqual([]);
    const samples = await scrape();
    expect(sampleValue(samples, "edge_pusher_canary_running")).toBe(1);
    expect(sampleValue(samples, "edge_pusher_canary_frozen")).toBe(0);
    expect(sampleValue(samples, "edge_pusher_canary_share_percent")).toBe(15);
    expect(sampleValue(samples, "edge_pusher_canary_for_seconds")).toBe(300);
    expect(sampleValue(samples, "edge_pusher_canary_p90_ms", { side: "canary" })).toBe(250);
    expect(sampleValue(samples, "edge_pusher_canary_error_ratio", { side: "stable" })).toBe(0.005);
    expect(sampleValue(samples, "edge_pusher_canary_samples", { side: "canary" })).toBe(240);
    expect(sampleValue(samples, "edge_pusher_canary_samples", { side: "stable" })).toBe(1300);

    // the judge's lease ran out: the judgement went, the canary is frozen
    await client.delete().key(`${prefix}canary/judgement`);
    const frozen = await waitFor("frozen", () => {
      const c = p.pusher.status.document().canary;
      return c?.state === "frozen" ? c : null;
    });
    expect(frozen.frozen).toBe("no judge: canary/judgement is absent");
    expect(sampleValue(await scrape(), "edge_pusher_canary_frozen")).toBe(1);

    // a judgement of another canary, or one a minute old, freezes it too
    await client
      .put(`${prefix}canary/judgement`)
      .value(
        JSON.stringify({ ...judgement, judged_at: new Date(Date.now() - 90_000).toISOString() }),
      );
    await waitFor("stale judgement", () =>
      p.pusher.status.document().canary?.frozen?.startsWith("the last judgement is") ? true : null,
    );

    await client.delete().key(`${prefix}canary/current`);
    await client.delete().key(`${prefix}canary/judgement`);
    await waitFor("no canary", () => (p.pusher.status.document().canary === null ? true : null));
    expect(sampleValue(await scrape(), "edge_pusher_canary_running")).toBe(0);
  });
});
