import { describe, expect, it } from "vitest";
import { ObservedMap } from "../../pusher/observed-map.js";

const P = "/edge/";

describe("ObservedMap", () => {
  it("carries the hit ratio of a value that has one, and takes a value without it", () => {
    const m = new ObservedMap(P);
    m.upsert({
      key: `${P}observed/DE/fra-1`,
      value: JSON.stringify({ p90_ms: 40, samples: 900, error_ratio: 0, hit_ratio: 0.82 }),
    });
    m.upsert({
      key: `${P}observed/BR/ams-1`,
      value: JSON.stringify({ p90_ms: 90, samples: 300, error_ratio: 0.01 }),
    });
    const pairs = [...m.pairs()];
    expect(pairs).toContainEqual({
      country: "DE",
      pool: "fra-1",
      p90_ms: 40,
      samples: 900,
      error_ratio: 0,
      hit_ratio: 0.82,
    });
    expect(pairs).toContainEqual({
      country: "BR",
      pool: "ams-1",
      p90_ms: 90,
      samples: 300,
      error_ratio: 0.01,
    });
  });

  it("leaves out a value whose hit ratio is not a share", () => {
    const m = new ObservedMap(P);
    m.upsert({
      key: `${P}observed/DE/fra-1`,
      value: JSON.stringify({ p90_ms: 40, samples: 900, error_ratio: 0, hit_ratio: 2 }),
    });
    expect([...m.pairs()]).toEqual([]);
  });
});
