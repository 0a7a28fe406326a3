import { describe, expect, it } from "vitest";
import { keysOffLease, type ObserverLease } from "../../soak/observed-leases.js";

const dec = (hex: string) => BigInt(`0x${hex}`).toString(10);
const T = 1_000_000;

/** The first observer's lease, let go at T (its process killed), and the second's, live. */
const leases: ObserverLease[] = [
  { hex: "554ba24e003526b4", generation: 0, from: T - 60_000, until: T },
  { hex: "554ba24e00352700", generation: 1, from: T + 2_000, until: null },
];

describe("every observed/ key carries the observer's lease (soak/observed-leases.ts)", () => {
  it("keys on the live lease, and on a killed observer's within the grace, are on its lease", () => {
    const keys = [
      { key: "/r/observed/DE/p02", lease: dec("554ba24e00352700") },
      { key: "/r/observed/FR/p03", lease: dec("554ba24e003526b4") },
    ];
    expect(keysOffLease(keys, leases, T + 30_000, 35_000)).toEqual([]);
  });

  it("a killed observer's key past the grace is named, with how long ago it was let go", () => {
    const keys = [{ key: "/r/observed/FR/p03", lease: dec("554ba24e003526b4") }];
    expect(keysOffLease(keys, leases, T + 40_000, 35_000)).toEqual([
      "/r/observed/FR/p03 is on lease 554ba24e003526b4, let go 40 s ago (grace 35 s)",
    ]);
  });

  it("a key without a lease, or on a lease no observer registered, is named", () => {
    const keys = [
      { key: "/r/observed/JP/p04", lease: "0" },
      { key: "/r/observed/US/p05", lease: dec("abc123") },
    ];
    expect(keysOffLease(keys, leases, T, 35_000)).toEqual([
      "/r/observed/JP/p04 has no lease",
      "/r/observed/US/p05 is on lease abc123, which no observer registered",
    ]);
  });
});
