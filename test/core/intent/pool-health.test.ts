import { describe, expect, it } from "vitest";
import { compile, type Health } from "../../../core/index.js";
import { judgePool, median } from "../../../core/intent/pool-health.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const reports = (...hs: [string, Health][]) => new Map(hs);
const up = (p90_ms?: number): Health =>
  p90_ms === undefined ? { status: "healthy" } : { status: "healthy", p90_ms };
const down: Health = { status: "unhealthy" };

describe("judgePool: a quorum of live checkers", () => {
  it("no live checker: no verdict (unhealthy)", () => {
    expect(judgePool(new Map(), undefined)).toBeUndefined();
  });

  it("a majority by default: 2 of 3 healthy is healthy, 1 of 3 is not", () => {
    const two = judgePool(reports(["a", up()], ["b", up()], ["c", down]), undefined);
    expect(two).toMatchObject({ status: "healthy", live: 3, healthyCheckers: 2, quorum: 2 });
    const one = judgePool(reports(["a", up()], ["b", down], ["c", down]), undefined);
    expect(one).toMatchObject({ status: "unhealthy", quorum: 2 });
  });

  it("the majority is of the live checkers: one of two gone, the other decides", () => {
    expect(judgePool(reports(["a", up()]), undefined)?.status).toBe("healthy");
    expect(judgePool(reports(["a", up()], ["b", down]), undefined)?.status).toBe("unhealthy");
  });

  it("an explicit quorum counts healthy checkers, and more than are live is unhealthy", () => {
    expect(judgePool(reports(["a", up()], ["b", down], ["c", down]), 1)?.status).toBe("healthy");
    expect(judgePool(reports(["a", up()]), 2)?.status).toBe("unhealthy");
  });

  it("not healthy and nobody says unhealthy: draining", () => {
    const d = judgePool(reports(["a", { status: "draining" }]), undefined);
    expect(d?.status).toBe("draining");
  });

  it("the p90 is the median of the healthy checkers' figures", () => {
    const h = judgePool(
      reports(
        ["a", up(100)],
        ["b", up(300)],
        ["c", up(2000)],
        ["d", { status: "unhealthy", p90_ms: 9 }],
      ),
      1,
    );
    expect(h?.p90_ms).toBe(300);
    expect(median([100, 301])).toBe(201);
    expect(median([])).toBeUndefined();
    expect(judgePool(reports(["a", up()]), undefined)?.p90_ms).toBeUndefined();
  });
});

describe("compile: checkers under health/{pool}/{checker}", () => {
  const base = () => {
    const kv = world();
    delete kv["health/fra-1"];
    return kv;
  };
  const de = (kv: Record<string, unknown>) => compile(snap(kv), opts()).map.countries.DE;

  it("three checkers, one says unhealthy or is gone: the pool stays", () => {
    const three = {
      ...base(),
      "health/fra-1/a": up(100),
      "health/fra-1/b": up(120),
      "health/fra-1/c": down,
    };
    expect(de(three)?.pool).toBe("fra-1");
    const gone: Record<string, unknown> = { ...three, "health/fra-1/c": up(110) };
    delete gone["health/fra-1/a"];
    expect(de(gone)?.pool).toBe("fra-1");
  });

  it("a majority says down: the pool drops", () => {
    const kv = {
      ...base(),
      "health/fra-1/a": up(),
      "health/fra-1/b": down,
      "health/fra-1/c": down,
    };
    expect(de(kv)?.pool).toBe("ams-1");
  });

  it("the plain key counts as one checker beside the others", () => {
    const kv = { ...base(), "health/fra-1": down, "health/fra-1/a": up(), "health/fra-1/b": down };
    expect(de(kv)?.pool).toBe("ams-1");
    const result = compile(snap({ ...kv, "health/fra-1/b": up() }), opts());
    expect(result.map.countries.DE?.pool).toBe("fra-1");
    expect(result.state.health.get("fra-1")).toMatchObject({ live: 3, healthyCheckers: 2 });
  });

  it("quorum from pool/: 2 of 3 asked, 1 healthy drops the pool", () => {
    const kv = {
      ...base(),
      "pool/fra-1": { origin: "https://fra-1.example.net", quorum: 2 },
      "health/fra-1/a": up(),
      "health/fra-1/b": down,
      "health/fra-1/c": down,
    };
    expect(de(kv)?.pool).toBe("ams-1");
    expect(
      de({ ...kv, "pool/fra-1": { origin: "https://fra-1.example.net", quorum: 1 } })?.pool,
    ).toBe("fra-1");
  });

  it("a bad checker name or value is a problem naming the key; the checker is not counted", () => {
    const kv = {
      ...base(),
      "health/fra-1/a": up(),
      "health/fra-1/B_x": up(),
      "health/fra-1/b": { status: "fine" },
      "health/fra-1/c/d": up(),
    };
    const { map } = compile(snap(kv), opts());
    expect(map.problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^health\/fra-1\/B_x: not a valid checker name/),
        expect.stringMatching(/^health\/fra-1\/b: status: .*\(checker not counted\)$/),
        expect.stringMatching(/^health\/fra-1\/c\/d: not a valid checker name/),
      ]),
    );
    expect(map.countries.DE?.pool).toBe("fra-1");
  });

  it("bad quorum and slow_ms values are problems naming the key and field", () => {
    const origin = "https://fra-1.example.net";
    for (const [value, field] of [
      [{ origin, quorum: 0 }, "quorum"],
      [{ origin, quorum: 1.5 }, "quorum"],
      [{ origin, slow_ms: { low: 800, high: 800 } }, "slow_ms.low"],
      [{ origin, slow_ms: { low: 0, high: 800 } }, "slow_ms.low"],
      [{ origin, slow_ms: { low: 100, high: 800.5 } }, "slow_ms.high"],
      [{ origin, slow_ms: { low: 100 } }, "slow_ms.high"],
      [{ origin, slow_ms: { low: 100, high: 200, mid: 1 } }, "slow_ms"],
    ] as const) {
      const { map } = compile(snap({ ...world(), "pool/fra-1": value }), opts());
      expect(map.problems.find((p) => p.startsWith("pool/fra-1: "))).toContain(`${field}: `);
    }
  });
});
