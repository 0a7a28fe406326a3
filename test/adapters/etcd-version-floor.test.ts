import { describe, expect, it } from "vitest";
import { etcdProductionVerdict } from "../../adapters/etcd-version-floor.js";

describe("etcdProductionVerdict", () => {
  it.each(["3.7.1", "3.7.3", "v3.6.14", "3.6.16", "3.5.33", "3.5.35", "3.8.0", "4.0.0"])(
    "accepts %s",
    (v) => {
      expect(etcdProductionVerdict(v)).toEqual({ accepted: true });
    },
  );

  it.each([
    ["3.7.0", /below 3\.7\.1/],
    ["3.6.13", /below 3\.6\.14/],
    ["3.5.16", /below 3\.5\.33/],
    ["3.4.23", /3\.4 is out of support/],
    ["2.3.8", /2\.3 is out of support/],
    ["garbage", /not a version/],
  ])("refuses %s, saying why and what it needs", (v, why) => {
    const verdict = etcdProductionVerdict(v);
    expect(verdict.accepted).toBe(false);
    if (verdict.accepted) return;
    expect(verdict.why).toMatch(why);
    expect(verdict.why).toContain("needs 3.5.33+, 3.6.14+, 3.7.1+");
  });
});
