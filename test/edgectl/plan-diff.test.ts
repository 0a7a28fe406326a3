import { describe, expect, it } from "vitest";
import { diffIntent } from "../../edgectl/apply/plan-diff.js";
import type { PrefixRead } from "../../edgectl/etcd/read-prefix.js";

const P = "/p/";

function read(entries: Record<string, string>, revision = 10): PrefixRead {
  return {
    revision,
    entries: Object.entries(entries).map(([rel, v], i) => ({
      key: `${P}${rel}`,
      rel,
      value: Buffer.from(v),
      createRevision: i + 1,
      modRevision: i + 1,
      lease: "0",
    })),
  };
}

describe("diffIntent", () => {
  const desired = {
    pools: { "a-1": { origin: "https://a.example.com" } },
    countries: { _default: { primary: "a-1", fallbacks: [] } },
  };

  it("ignores key order in stored JSON and never touches overrides, health, epoch or the lock", () => {
    const r = read({
      "pool/a-1": '{"origin":"https://a.example.com"}',
      "country/_default": '{"fallbacks":[],"primary":"a-1"}',
      "override/DE": "{}",
      "health/a-1": "{}",
      epoch: "3",
      "lock/apply": "x",
    });
    expect(diffIntent(r, desired, P)).toEqual([]);
  });

  it("removes intent keys the file does not name, including invalid ones", () => {
    const r = read({
      "pool/a-1": '{"origin":"https://a.example.com"}',
      "country/_default": "{broken",
      "country/ZZ": "{}",
      "pool/b-1": '{"origin":"https://b.example.com"}',
    });
    expect(diffIntent(r, desired, P).map((c) => `${c.kind} ${c.rel}`)).toEqual([
      "remove country/ZZ",
      "change country/_default",
      "remove pool/b-1",
    ]);
  });
});
