import { describe, expect, it } from "vitest";
import { memberTimeouts } from "../../adapters/etcd-members.js";
import { settleBudgetMs } from "../../edgectl/apply/commit.js";
import { commitFailure } from "../../edgectl/apply/commit-plan.js";

describe("commit failures and timeouts", () => {
  it("maps each unapplied commit to its exit code: 2 conflict, 4 proven not written, 5 unknown", () => {
    const f = (reason: "epoch-moved" | "lock-lost" | "not-landed" | "unknown") =>
      commitFailure({ ok: false, reason, epochNow: "7" }, 6);
    expect(f("epoch-moved").exitCode).toBe(2);
    expect(f("epoch-moved").message).toContain("epoch moved from 6 to 7");
    expect(f("lock-lost").exitCode).toBe(2);
    expect(f("not-landed").exitCode).toBe(4);
    expect(f("not-landed").message).toContain("nothing was written");
    expect(f("unknown").exitCode).toBe(5);
    expect(f("unknown").message).toContain("run plan");
  });

  it("gives one member at most 2 s and the cluster twice the request deadline; settles for 3", () => {
    expect(memberTimeouts(5000)).toEqual({ attemptMs: 2000, budgetMs: 10_000 });
    expect(memberTimeouts(1000)).toEqual({ attemptMs: 1000, budgetMs: 2000 });
    expect(settleBudgetMs(5000)).toBe(15_000);
    expect(settleBudgetMs(500)).toBe(3000);
  });
});
