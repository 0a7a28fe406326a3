import { fileURLToPath } from "node:url";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, compatibilityDate } from "../../testkit/worker.js";
import { assertSplitResult } from "../cases/split-assertions.js";
import { evaluateSplitCase, SPLIT_CASES, type SplitResult } from "../cases/split-cases.js";

const ENTRY = fileURLToPath(new URL("./fixtures/split-cases-entry.ts", import.meta.url));

describe("weighted rendezvous hashing: the shared split table in workerd", () => {
  let mf: Miniflare | undefined;
  let results: SplitResult[] = [];

  beforeAll(async () => {
    const [script, date] = await Promise.all([bundleForWorkerd(ENTRY), compatibilityDate()]);
    mf = newMiniflare({ modules: true, script, compatibilityDate: date, cf: false });
    const res = await mf.dispatchFetch("http://split.test/");
    results = (await res.json()) as SplitResult[];
  }, 120_000);
  afterAll(async () => {
    await mf?.dispose();
  });

  it.each(SPLIT_CASES.map((c, i) => [c.name, i] as const))("%s", (_name, i) => {
    const c = SPLIT_CASES[i];
    const r = results[i];
    if (!c || !r) throw new Error(`workerd returned no result for case ${i}`);
    assertSplitResult(c, r);
    // Bit for bit what Node computes: the Worker and the CLI agree on every viewer.
    expect(r).toEqual(evaluateSplitCase(c));
  });
});
