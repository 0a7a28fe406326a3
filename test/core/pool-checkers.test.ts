import { describe, expect, it } from "vitest";
import type { Health } from "../../core/index.js";
import { PoolCheckers } from "../../core/pool-checkers.js";
import { judgePool, PLAIN_CHECKER } from "../../core/pool-health.js";

const up: Health = { status: "healthy", p90_ms: 40 };
const down: Health = { status: "unhealthy" };
const noQuorum = () => undefined;

describe("PoolCheckers: reports by pool, judged once per change", () => {
  it("judges the plain key and named checkers together, as judgePool does, in pool order", () => {
    const c = new PoolCheckers();
    c.set("b", undefined, up);
    c.set("a", "x", up);
    c.set("a", undefined, down);
    c.set("a", "y", down);
    const judged = c.judge(noQuorum);
    expect([...judged.keys()]).toEqual(["a", "b"]);
    const expected = judgePool(
      new Map([
        [PLAIN_CHECKER, down],
        ["x", up],
        ["y", down],
      ]),
      undefined,
    );
    expect(judged.get("a")).toEqual(expected);
    expect(judged.get("b")).toMatchObject({ status: "healthy", live: 1, quorum: 1 });
  });

  it("hands out the same judgement until a report of that pool or its quorum changes", () => {
    const c = new PoolCheckers();
    c.set("a", undefined, up);
    c.set("b", undefined, up);
    const first = c.judge(noQuorum);
    const again = c.judge(noQuorum);
    expect(again.get("a")).toBe(first.get("a"));
    c.set("a", "x", down);
    const changed = c.judge(noQuorum);
    expect(changed.get("a")).not.toBe(first.get("a"));
    expect(changed.get("a")).toMatchObject({ status: "unhealthy", live: 2 });
    expect(changed.get("b")).toBe(first.get("b"));
    const quorumOne = c.judge((pool) => (pool === "a" ? 1 : undefined));
    expect(quorumOne.get("a")).toMatchObject({ status: "healthy", quorum: 1 });
  });

  it("a pool whose last report is deleted is no longer judged; clear forgets every pool", () => {
    const c = new PoolCheckers();
    c.set("a", undefined, up);
    c.set("a", "x", up);
    c.judge(noQuorum);
    c.delete("a", undefined);
    expect(c.judge(noQuorum).get("a")).toMatchObject({ live: 1, checkers: [{ checker: "x" }] });
    c.delete("a", "x");
    expect(c.judge(noQuorum).size).toBe(0);
    c.set("b", undefined, down);
    c.clear();
    expect(c.judge(noQuorum).size).toBe(0);
  });
});
