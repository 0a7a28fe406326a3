import { describe, expect, it } from "vitest";
import { HistoryTracker } from "../../pusher/history-tracker.js";

const read = (revision: number, clusterId = "c1") => ({ revision, clusterId });

describe("HistoryTracker", () => {
  it("stays in history 0 while revisions grow on one cluster", () => {
    const h = new HistoryTracker();
    for (const r of [5, 9, 9, 30]) {
      expect(h.suspect(read(r))).toBe(false);
      expect(h.record(read(r), false)).toBeNull();
    }
    expect(h.history).toBe(0);
  });

  it("starts history + 1 only when a fresh read confirms the revision went back", () => {
    const h = new HistoryTracker();
    h.record(read(100), false);
    expect(h.suspect(read(40))).toBe(true);
    // The fresh read is back at 100 or beyond: a fluke, same history.
    expect(h.record(read(101), true)).toBeNull();
    expect(h.history).toBe(0);
    expect(h.suspect(read(40))).toBe(true);
    expect(h.record(read(41), true)).toEqual({ kind: "revision-went-back", from: 101, to: 41 });
    expect(h.history).toBe(1);
    // The new history's revisions are the baseline now.
    expect(h.suspect(read(42))).toBe(false);
    expect(h.suspect(read(30))).toBe(true);
  });

  it("starts history + 1 on another cluster id, whatever the revision", () => {
    const h = new HistoryTracker();
    h.record(read(100), false);
    expect(h.suspect(read(500, "c2"))).toBe(true);
    expect(h.record(read(501, "c2"), true)).toEqual({
      kind: "cluster-changed",
      from: "c1",
      to: "c2",
    });
    expect(h.history).toBe(1);
  });

  it("follows KV only for a map ordered after the newest compile", () => {
    const h = new HistoryTracker();
    h.record(read(50), false);
    const compiled = { history: 0, rev: 50 };
    // A stale copy (before the compile) and another leader's newer write of this history: no move.
    expect(h.followKv({ history: 0, rev: 40 }, compiled, 50)).toBeNull();
    expect(h.followKv({ history: 0, rev: 50 }, compiled, 52)).toBeNull();
    expect(h.history).toBe(0);
    // A map above etcd's revision came from an older history: the next one starts.
    expect(h.followKv({ history: 0, rev: 900 }, compiled, 50)).toMatchObject({
      kind: "kv-from-older-history",
      to: 1,
    });
    expect(h.history).toBe(1);
    // Another pusher already moved to history 3 within this etcd: adopted, not bumped.
    expect(h.followKv({ history: 3, rev: 45 }, { history: 1, rev: 50 }, 50)).toEqual({
      kind: "kv-history-adopted",
      kvHistory: 3,
    });
    expect(h.history).toBe(3);
    // A stale copy of an older history never moves it again.
    expect(h.followKv({ history: 0, rev: 900 }, { history: 3, rev: 50 }, 50)).toBeNull();
    expect(h.history).toBe(3);
  });
});
