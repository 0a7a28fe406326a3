import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../../testkit/pusher-process.js";
import {
  deployedMemoryEnvironment,
  unitMemoryEnvironment,
  withoutExposedGc,
} from "../../testkit/unit-environment.js";

describe("the services run with their units' memory settings (testkit/unit-environment.ts)", () => {
  it("reads quoted and plain Environment= words, and only the memory settings", () => {
    const unit = [
      "[Service]",
      "Environment=OBSERVE_INTERVAL=10 OBSERVE_ARGS=",
      'Environment="NODE_OPTIONS=--max-old-space-size=128 --expose-gc"',
      "Environment=MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536",
      "EnvironmentFile=/etc/edge-router/observer.env",
    ].join("\n");
    expect(unitMemoryEnvironment(unit)).toEqual({
      NODE_OPTIONS: "--max-old-space-size=128 --expose-gc",
      MALLOC_ARENA_MAX: "2",
      MALLOC_MMAP_THRESHOLD_: "65536",
    });
  });

  it("finds the deployed observer unit's old-space cap and malloc settings", () => {
    const env = unitMemoryEnvironment(
      readFileSync(join(ROOT, "deploy/edge-observer.service"), "utf8"),
    );
    expect(env.NODE_OPTIONS).toMatch(/--max-old-space-size=\d+/);
    expect(env.MALLOC_ARENA_MAX).toBeDefined();
  });

  it("gives the pusher, the heartbeat and the observer their units' --expose-gc and malloc settings", () => {
    for (const unit of [
      "edge-pusher.service",
      "edge-heartbeat@.service",
      "edge-observer.service",
    ]) {
      const env = deployedMemoryEnvironment(ROOT, unit);
      expect(env.NODE_OPTIONS?.split(" ")).toContain("--expose-gc");
      expect(env.MALLOC_ARENA_MAX).toBe("2");
      expect(env.MALLOC_MMAP_THRESHOLD_).toBe("65536");
    }
  });

  it("takes only --expose-gc out of NODE_OPTIONS, and drops NODE_OPTIONS left empty", () => {
    const env = { NODE_OPTIONS: "--max-old-space-size=64 --expose-gc", MALLOC_ARENA_MAX: "2" };
    expect(withoutExposedGc(env)).toEqual({
      NODE_OPTIONS: "--max-old-space-size=64",
      MALLOC_ARENA_MAX: "2",
    });
    expect(withoutExposedGc({ NODE_OPTIONS: "--expose-gc" })).toEqual({});
  });
});
