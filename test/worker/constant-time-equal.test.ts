import { fileURLToPath } from "node:url";
import type { Miniflare } from "miniflare";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newMiniflare } from "../../testkit/miniflare.js";
import { bundleForWorkerd, compatibilityDate } from "../../testkit/worker.js";

const ENTRY = fileURLToPath(new URL("./fixtures/constant-time-entry.ts", import.meta.url));

const CASES: [string, string, boolean][] = [
  ["abc", "abc", true],
  ["abc", "abd", false],
  ["abc", "ab", false],
  ["ab", "abc", false],
  ["", "", true],
  ["", "a", false],
  ["tokén", "tokén", true],
  ["tokén", "token", false],
  ["x".repeat(64), `${"x".repeat(63)}y`, false],
];

/** `observeAccess(Authorization, OBSERVE_TOKEN)`: Bearer in any case of the scheme, nothing else. */
const BEARER: [string | null, string, boolean][] = [
  ["Bearer s3cret", "s3cret", true],
  ["bearer  s3cret ", "s3cret", true],
  ["Bearer s3cre", "s3cret", false],
  ["Bearer s3cret extra", "s3cret", false],
  ["Basic s3cret", "s3cret", false],
  ["s3cret", "s3cret", false],
  [null, "s3cret", false],
];

describe("constantTimeEqual (crypto.subtle.timingSafeEqual) in workerd", () => {
  let mf: Miniflare | undefined;
  let answers: { compare: boolean[]; bearer: boolean[] } = { compare: [], bearer: [] };

  beforeAll(async () => {
    const [script, date] = await Promise.all([bundleForWorkerd(ENTRY), compatibilityDate()]);
    mf = newMiniflare({ modules: true, script, compatibilityDate: date, cf: false });
    const res = await mf.dispatchFetch("http://compare.test/", {
      method: "POST",
      body: JSON.stringify({
        compare: CASES.map(([a, b]) => [a, b]),
        bearer: BEARER.map(([h, t]) => [h, t]),
      }),
    });
    answers = (await res.json()) as typeof answers;
  }, 120_000);
  afterAll(async () => {
    await mf?.dispose();
  });

  it.each(CASES.map((c, i) => [...c, i] as const))("%j vs %j → %s", (_a, _b, want, i) => {
    expect(answers.compare[i]).toBe(want);
  });

  it.each(BEARER.map((c, i) => [...c, i] as const))(
    "observeAccess(%j, %j) → %s",
    (_h, _t, want, i) => {
      expect(answers.bearer[i]).toBe(want);
    },
  );
});
