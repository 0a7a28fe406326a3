import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { unitMemoryEnvironment } from "../../soak/unit-environment.js";
import { ROOT } from "../../testkit/pusher-process.js";

describe("the soak runs the observer with its unit's memory settings (soak/unit-environment.ts)", () => {
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
});
