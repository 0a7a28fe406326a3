import { describe, expect, it } from "vitest";
import { parseSoakOptions } from "../../soak/options.js";

describe("soak command line", () => {
  it("defaults: 30 minutes into soak/out, no leak", () => {
    expect(parseSoakOptions([])).toMatchObject({
      minutes: 30,
      quick: false,
      out: "soak/out",
      plantLeak: null,
      expectFail: [],
    });
  });

  it("--quick is 5 minutes; the self-check's options", () => {
    expect(
      parseSoakOptions(["--quick", "--plant-leak", "lease", "--expect-fail", "leases_held"]),
    ).toMatchObject({ minutes: 5, quick: true, plantLeak: "lease", expectFail: ["leases_held"] });
    expect(
      parseSoakOptions(["--quick", "--plant-leak", "observed", "--expect-fail", "observed_keys"]),
    ).toMatchObject({ plantLeak: "observed", expectFail: ["observed_keys"] });
  });

  it("refuses what it cannot run, naming the option", () => {
    expect(() => parseSoakOptions(["--minutes", "1"])).toThrow(/--minutes: "1"/);
    expect(() => parseSoakOptions(["--quick", "--minutes", "9"])).toThrow(/exclude each other/);
    expect(() => parseSoakOptions(["--plant-leak", "fds"])).toThrow(/--plant-leak: "fds"/);
    expect(() => parseSoakOptions(["--bogus"])).toThrow(/bogus/);
  });
});
