import { describe, expect, it } from "vitest";
import { checkCi } from "../../../bench/lib/row.js";

describe("checkCi: a goal judged on an interval", () => {
  it("is met only when the whole interval is on the goal's side", () => {
    expect(checkCi([1.02, 1.12], 1.15, "at most")).toBe("met");
    expect(checkCi([0.98, 1.01], 0.97, "at least")).toBe("met");
  });

  it("is missed when the whole interval is on the other side", () => {
    expect(checkCi([1.16, 1.3], 1.15, "at most")).toBe("MISSED");
    expect(checkCi([0.9, 0.96], 0.97, "at least")).toBe("MISSED");
  });

  it("is undecided when the interval holds the goal, whichever side the estimate is on", () => {
    expect(checkCi([1.1, 1.3], 1.15, "at most")).toBe("undecided");
    expect(checkCi([-21, 74], 20, "at most")).toBe("undecided");
    expect(checkCi([0.93, 1.014], 0.97, "at least")).toBe("undecided");
  });
});
