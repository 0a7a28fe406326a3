import { describe, expect, it } from "vitest";
import { PoolCheckers } from "../../../core/incremental/pool-checkers.js";
import type { Health } from "../../../core/index.js";
import { judgePool, PLAIN_CHECKER } from "../../../core/intent/pool-health.js";

const up: Health = { status: "healthy", p90_ms: 40 };
const down: Health = { status: "unhealthy" };
const noQuorum = () => undefined;

describe("PoolCheckers: reports by pool, judged when asked", () => {
  it("judges each pool of a view once, however often a compile asks (one ask per route)", () => {
    const c = new PoolCheckers();
    c.set("a", "x", up);
    c.set("b", undefined, down);
    const asked: string[] = [];
    const judged = c.judge((pool) => {
      asked.push(pool);
      return undefined;
    });
    const first = judged.get("a");
    for (let i = 0; i < 5; i++) {
      expect(judged.get("a")).toBe(first);
      judged.get("b");
      judged.get("missing");
    }
    expect([...judged.values()].map((h) => h.status)).toEqual(["healthy", "unhealthy"]);
    expect(asked).toEqual(["a", "b"]);
    expect(judged.get("missing")).toBeUndefined();
  });

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

  it("a view handed out keeps the reports and quorum it saw; later changes leave it alone", () => {
    const c = new PoolCheckers();
    c.set("a", undefined, up);
    c.set("b", "x", up);
    c.set("c", undefined, up);
    const quorums = new Map([["a", 2]]);
    const first = c.judge((pool) => quorums.get(pool));
    c.set("a", "x", down);
    c.set("b", "y", down);
    c.delete("c", undefined);
    c.set("d", undefined, up);
    expect([...first.keys()]).toEqual(["a", "b", "c"]);
    expect(first.size).toBe(3);
    expect(first.get("a")).toMatchObject({ status: "unhealthy", live: 1, quorum: 2 });
    expect(first.get("b")).toMatchObject({ status: "healthy", live: 1 });
    expect(first.has("c")).toBe(true);
    expect(first.has("d")).toBe(false);
    const now = c.judge(noQuorum);
    expect([...now.keys()]).toEqual(["a", "b", "d"]);
    expect(now.get("a")).toMatchObject({ status: "unhealthy", live: 2 });
    expect(now.get("b")).toMatchObject({ status: "unhealthy", live: 2, healthyCheckers: 1 });
    expect(now.get("c")).toBeUndefined();
    expect([...now.values()].map((h) => h.live)).toEqual([2, 2, 1]);
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
