import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  MAX_MAP_PROBLEMS,
  MAX_PROBLEM_CHARS,
  type MapMeta,
} from "../../core/index.js";
import { systemClock } from "../../pusher/clock.js";
import { pushEntries } from "../../pusher/kv-entries.js";
import { PusherStatus } from "../../pusher/status.js";

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;
const route = {
  pool: "par-1",
  origin: "https://par-1.example.net",
  chain: [{ pool: "par-1", origin: "https://par-1.example.net" }],
  source: "floor",
  degraded: "no-default-rule" as const,
};

describe("problem output outside the map (docs/reference.md §3.6)", () => {
  it("/status lists at most MAX_MAP_PROBLEMS problems, each bounded and escaped", () => {
    const status = new PusherStatus("p", systemClock);
    status.problems = Array.from(
      { length: 5000 },
      (_, i) => `junk/${i}\u001b[2J: ${"x".repeat(500)}`,
    );
    const doc = status.document();
    expect(doc.problems).toHaveLength(MAX_MAP_PROBLEMS);
    expect(doc.problems.at(-1)).toBe(`… and ${5000 - MAX_MAP_PROBLEMS + 1} more problems`);
    for (const line of doc.problems) {
      expect(line.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
      expect(UNSAFE.test(line)).toBe(false);
    }
    status.pushed(3, 1, 0, ["country/FR: invalid JSON"]);
    expect(status.document().problems).toEqual(["country/FR: invalid JSON"]);
  });

  it("/status last_error is escaped and cut after the secrets are scrubbed", () => {
    const secret = "tok-0123456789abcdef";
    const status = new PusherStatus("p", systemClock, [secret]);
    // the secret straddles the cut: scrubbing after cutting would leave its start behind
    status.kvFailed(new Error(`bad \u0007\r\n${"y".repeat(162)}${secret}`));
    const message = status.document().last_error?.message ?? "";
    expect(message.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
    expect(UNSAFE.test(message)).toBe(false);
    expect(message).toContain("bad \\u0007\\u000d\\u000a");
    expect(message).not.toContain("tok-");
    expect(message).toMatch(/y\[red…$/);
  });

  it("meta's problems follow the same rules, even from a map an older pusher wrote", () => {
    const map: CompiledMap = {
      v: 1,
      rev: 4,
      epoch: 1,
      compiled_at: "2026-11-29T15:00:00.000Z",
      default: route,
      countries: {},
      problems: [`country/DE: invalid JSON (Unexpected token \u0000 in "${"z".repeat(400)}")`],
      history: 0,
    };
    const [routes, meta] = pushEntries(map, map, "p", 0);
    expect(routes?.key).toBe("routes");
    const doc = JSON.parse(meta?.value ?? "{}") as MapMeta;
    expect(doc.problems).toHaveLength(1);
    expect(doc.problems[0]?.length).toBeLessThanOrEqual(MAX_PROBLEM_CHARS);
    expect(UNSAFE.test(doc.problems[0] ?? "")).toBe(false);
  });
});
