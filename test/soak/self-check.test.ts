import { describe, expect, it } from "vitest";
import type { GrowthVerdict } from "../../soak/no-growth.js";
import type { Figure } from "../../soak/samples.js";
import { selfCheck } from "../../soak/self-check.js";

const verdict = (figure: Figure, status: GrowthVerdict["status"]): GrowthVerdict => ({
  figure,
  series: "cluster",
  status,
  detail: "",
  fit: null,
});

describe("the planted-leak self-check", () => {
  it("passes when every figure expected to grow failed its goal", () => {
    const r = selfCheck(
      [verdict("leases_held", "fail"), verdict("rss_mib", "pass")],
      ["leases_held"],
    );
    expect(r.ok).toBe(true);
    expect(r.line).toBe("self-check passed: the planted leak was caught (grew: leases_held)");
  });

  it("fails when the planted leak went unseen", () => {
    const r = selfCheck([verdict("leases_held", "pass")], ["leases_held"]);
    expect(r.ok).toBe(false);
    expect(r.line).toBe("self-check FAILED: expected growth of leases_held, saw none");
  });

  it("fails when something else grew but not the figure expected", () => {
    const r = selfCheck(
      [verdict("series", "fail"), verdict("leases_held", "short")],
      ["leases_held"],
    );
    expect(r.ok).toBe(false);
    expect(r.line).toContain("saw series");
  });

  it("names each figure that grew once, sorted", () => {
    const r = selfCheck(
      [verdict("series", "fail"), verdict("leases_held", "fail"), verdict("series", "fail")],
      ["series", "leases_held"],
    );
    expect(r.ok).toBe(true);
    expect(r.line).toContain("grew: leases_held, series");
  });
});
