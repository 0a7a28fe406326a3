import { describe, expect, it } from "vitest";
import { WriteSlots } from "../../pusher/write-slots.js";

describe("WriteSlots (one KV write per second per key)", () => {
  it("lets routes go out at once after a meta heartbeat, meta following at its own slot", () => {
    const slots = new WriteSlots(1_000);
    slots.took(10_000, { routes: false, meta: true });
    // A change 300 ms after the heartbeat: routes' slot is free, meta's is not.
    expect(slots.plan(10_300, true)).toEqual({ waitMs: 0, withMeta: false });
    slots.took(10_300, { routes: true, meta: false });
    // meta (now describing the new map) waits for its slot; routes for its own.
    expect(slots.plan(10_400, false)).toEqual({ waitMs: 600, withMeta: true });
    expect(slots.plan(10_400, true)).toEqual({ waitMs: 900, withMeta: false });
    expect(slots.plan(11_300, true)).toEqual({ waitMs: 0, withMeta: true });
  });

  it("holds a second routes write to the key's slot, whatever meta did", () => {
    const slots = new WriteSlots(1_000);
    expect(slots.plan(0, true)).toEqual({ waitMs: 0, withMeta: true });
    slots.took(0, { routes: true, meta: true });
    expect(slots.plan(999, true).waitMs).toBe(1);
    expect(slots.plan(999, false).waitMs).toBe(1);
  });
});
