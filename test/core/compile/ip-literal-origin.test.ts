import { describe, expect, it } from "vitest";
import { compile } from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

describe("compile: a pool whose origin is an IP literal", () => {
  it("is refused in the map's problems with the reason, and its origin never reaches the map", () => {
    const { map, problems } = compile(
      snap(world({ "pool/fra-1": { origin: "https://203.0.113.7" } })),
      opts(),
    );
    expect(problems).toContainEqual(
      expect.objectContaining({ key: "pool/fra-1", code: "ip-literal-origin" }),
    );
    expect(map.problems.some((p) => /^pool\/fra-1: origin: an IP-literal host.*1003/.test(p))).toBe(
      true,
    );
    expect(JSON.stringify(map)).not.toContain("203.0.113.7");
  });

  it("takes a loopback origin as it is", () => {
    const { map, problems } = compile(
      snap(world({ "pool/fra-1": { origin: "http://127.0.0.1:9101" } })),
      opts(),
    );
    expect(problems).toEqual([]);
    expect(map.countries.DE?.origin).toBe("http://127.0.0.1:9101");
  });
});
