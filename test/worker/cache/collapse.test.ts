import { describe, expect, it } from "vitest";
import { Collapser } from "../../../worker/cache/collapse.js";

describe("Collapser", () => {
  it("lets one request lead a key; the others wait until it releases", async () => {
    const c = new Collapser();
    const release = c.lead("k", 60_000);
    expect(release).not.toBeNull();
    expect(c.lead("k", 60_000)).toBeNull();
    let woke = false;
    const waiting = c.wait("k").then(() => {
      woke = true;
    });
    await Promise.resolve();
    expect(woke).toBe(false);
    release?.();
    await waiting;
    expect(woke).toBe(true);
    expect(c.size).toBe(0);
    expect(c.lead("k", 60_000)).not.toBeNull();
  });

  it("does not wait when no one leads the key", async () => {
    const c = new Collapser();
    await c.wait("nobody");
    expect(c.size).toBe(0);
  });

  it("lets a claim lapse after its hold time: a leader that never releases holds no one up", async () => {
    let now = 1000;
    const c = new Collapser(() => now);
    const stuck = c.lead("k", 500);
    expect(stuck).not.toBeNull();
    now = 1499;
    expect(c.lead("k", 500)).toBeNull();
    now = 1500;
    await c.wait("k");
    const next = c.lead("k", 500);
    expect(next).not.toBeNull();
    // The stuck leader's late release does not free the new leader's claim.
    stuck?.();
    expect(c.lead("k", 500)).toBeNull();
  });
});
