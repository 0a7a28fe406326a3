import { describe, expect, it } from "vitest";
import {
  HIT_FOR_PASS_MAX,
  HIT_FOR_PASS_MS,
  HitForPass,
} from "../../../worker/cache/hit-for-pass.js";

describe("HitForPass", () => {
  it("remembers a key for its time, then forgets it", () => {
    let now = 0;
    const h = new HitForPass(() => now);
    expect(h.has("k")).toBe(false);
    h.mark("k");
    now = HIT_FOR_PASS_MS - 1;
    expect(h.has("k")).toBe(true);
    now = HIT_FOR_PASS_MS;
    expect(h.has("k")).toBe(false);
    expect(h.size).toBe(0);
  });

  it("forgets a key whose answer was kept", () => {
    const h = new HitForPass(() => 0);
    h.mark("k");
    h.forget("k");
    expect(h.has("k")).toBe(false);
  });

  it("holds at most HIT_FOR_PASS_MAX keys, dropping the oldest", () => {
    const h = new HitForPass(() => 0);
    for (let i = 0; i <= HIT_FOR_PASS_MAX; i++) h.mark(`k${i}`);
    expect(h.size).toBe(HIT_FOR_PASS_MAX);
    expect(h.has("k0")).toBe(false);
    expect(h.has(`k${HIT_FOR_PASS_MAX}`)).toBe(true);
  });
});
