import { describe, expect, it } from "vitest";
import { benchPusherEnvironment } from "../../../bench/lib/pusher-process.js";

const UNIT = {
  NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=2 --expose-gc",
  MALLOC_ARENA_MAX: "2",
  MALLOC_MMAP_THRESHOLD_: "65536",
};

describe("benchPusherEnvironment: the unit's variables under the bench's memory knobs", () => {
  it("passes the unit's variables as they are without knobs", () => {
    expect(benchPusherEnvironment(UNIT, {})).toEqual(UNIT);
  });

  it("BENCH_PUSHER_NODE_OPTIONS replaces NODE_OPTIONS; empty drops it", () => {
    expect(benchPusherEnvironment(UNIT, { BENCH_PUSHER_NODE_OPTIONS: "--jitless" })).toEqual({
      ...UNIT,
      NODE_OPTIONS: "--jitless",
    });
    expect(benchPusherEnvironment(UNIT, { BENCH_PUSHER_NODE_OPTIONS: "" }).NODE_OPTIONS).toBe(
      undefined,
    );
  });
});
