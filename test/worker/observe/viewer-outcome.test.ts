import { fileURLToPath } from "node:url";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NO_POOL, OUTCOMES } from "../../../core/contract/observations.js";
import { newMiniflare } from "../../../testkit/miniflare.js";
import { bundleForWorkerd, compatibilityDate } from "../../../testkit/worker.js";

const ENTRY = fileURLToPath(new URL("./fixtures/viewer-outcome-entry.ts", import.meta.url));

const CASES = [
  { status: 200, pool: "fra-1", tried: ["fra-1"], cache: "MISS" },
  { status: 200, pool: "ams-1", tried: ["fra-1", "ams-1"], canary: "c3:stable", cache: "HIT" },
  { status: 200, pool: "fra-1", tried: ["fra-1"], canary: "c12:canary", cache: "BYPASS" },
  { status: 503, pool: "fra-1", tried: ["fra-1"], cache: "STALE" },
  { status: 404, pool: "ams-1", tried: ["fra-1", "ams-1"], cache: "MISS" },
] as const;

/** `viewerOutcome`'s answer as JSON (its module runs in workerd only). */
type ViewerOutcome = Record<string, unknown>;

interface Answer {
  readonly kept: boolean;
  readonly keptOnCopy: boolean;
  readonly fromFacts: ViewerOutcome;
  readonly fromHeaders: ViewerOutcome;
}

describe("viewerOutcome: what the edge keeps beside its response says what its headers say (workerd)", () => {
  let mf: Miniflare | undefined;
  let answers: Answer[] = [];
  let refused: { kept: boolean; outcome: ViewerOutcome } | undefined;

  beforeAll(async () => {
    const [script, date] = await Promise.all([bundleForWorkerd(ENTRY), compatibilityDate()]);
    mf = newMiniflare({ modules: true, script, compatibilityDate: date, cf: false });
    const res = await mf.dispatchFetch("http://outcome.test/", {
      method: "POST",
      body: JSON.stringify(CASES),
    });
    const body = (await res.json()) as { cases: Answer[]; refused: typeof refused };
    answers = body.cases;
    refused = body.refused;
  }, 120_000);
  afterAll(async () => {
    await mf?.dispose();
  });

  it.each(CASES.map((c, i) => [JSON.stringify(c), i] as const))(
    "%s: facts kept, and the same outcome as from its headers",
    (_c, i) => {
      const a = answers[i];
      expect(a?.kept).toBe(true);
      expect(a?.keptOnCopy).toBe(false);
      expect(a?.fromFacts).toEqual(a?.fromHeaders);
    },
  );

  it("says pool, side, failover, cache and outcome", () => {
    expect(answers[1]?.fromFacts).toMatchObject({
      country: "DE",
      pool: "ams-1",
      side: "c3:stable",
      failover: true,
      outcome: OUTCOMES.indexOf("ok"),
      originAnswered: false,
      waitIsTtfb: false,
    });
    expect(answers[3]?.fromFacts).toMatchObject({
      outcome: OUTCOMES.indexOf("origin_error"),
      failover: false,
    });
  });

  it("reads the edge's own answers from their headers: no pool, the edge's error", () => {
    expect(refused?.kept).toBe(false);
    expect(refused?.outcome).toMatchObject({
      pool: NO_POOL,
      outcome: OUTCOMES.indexOf("edge_error"),
      cache: null,
    });
  });
});
