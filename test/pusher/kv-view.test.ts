import { describe, expect, it } from "vitest";
import { type CompileResult, compile } from "../../core/index.js";
import { KvView } from "../../pusher/kv-view.js";

const prefix = "/t/routing/v1/";
function compiled(revision: number, primary: string): CompileResult {
  const entries = [
    { key: `${prefix}pool/a`, value: Buffer.from('{"origin":"https://a.example.net"}') },
    { key: `${prefix}pool/b`, value: Buffer.from('{"origin":"https://b.example.net"}') },
    { key: `${prefix}health/a`, value: Buffer.from('{"status":"healthy","p90_ms":1}') },
    { key: `${prefix}health/b`, value: Buffer.from('{"status":"healthy","p90_ms":1}') },
    { key: `${prefix}country/_default`, value: Buffer.from(`{"primary":"${primary}"}`) },
  ];
  return compile(
    { revision, entries: entries.map((e, i) => ({ ...e, modRevision: i + 1 })) },
    {
      carried: null,
      prefix,
      floorPool: "a",
      originTemplate: "https://{pool}.example.net",
      now: new Date(0),
    },
  );
}

describe("KvView.routesDue (what still has to be written)", () => {
  it("owes nothing once the desired map itself is what KV holds", () => {
    const view = new KvView("p1");
    const result = compiled(10, "a");
    view.desired = result;
    expect(view.routesDue()).toBe(result.map);
    view.learned(result.map, 1);
    expect(view.routesDue()).toBeNull();
  });

  it("owes a map at the same revision whose routing differs from what KV holds", () => {
    const view = new KvView("p1");
    view.learned(compiled(10, "a").map, 1);
    const other = compiled(10, "b");
    view.desired = other;
    expect(view.routesDue()).toBe(other.map);
    // The same document compiled again (another object): not due.
    view.desired = compiled(10, "a");
    expect(view.routesDue()).toBeNull();
  });

  it("never owes a map older than the one KV holds", () => {
    const view = new KvView("p1");
    view.learned(compiled(11, "a").map, 1);
    view.desired = compiled(10, "b");
    expect(view.routesDue()).toBeNull();
  });
});

describe("KvView: a new revision that routes the same (docs/reference.md §3)", () => {
  it("owes no routes for it, and meta confirms its revision", () => {
    const view = new KvView("p1");
    const first = compiled(10, "a");
    view.desired = first;
    view.learned(first.map, 1);
    view.metaWritten(first.map);
    expect(view.metaChanged()).toBe(false);
    const later = compiled(17, "a");
    view.desired = later;
    expect(view.routesDue()).toBeNull();
    expect(view.metaSource()).toBe(later.map);
    expect(view.metaChanged()).toBe(true);
    view.metaWritten(later.map);
    expect(view.metaChanged()).toBe(false);
    // a routing change at a later revision is owed, and meta describes it
    const moved = compiled(20, "b");
    view.desired = moved;
    expect(view.routesDue()).toBe(moved.map);
    expect(view.metaSource()).toBe(moved.map);
  });

  it("owes no routes for a shed's below_since alone, but does for its share", () => {
    const view = new KvView("p1");
    const base = compiled(10, "a");
    const shed = { share: 40, at: "2026-01-01T00:00:00.000Z" };
    const withShed = { ...base.map, sheds: { a: shed } };
    view.learned(withShed, 1);
    view.desired = {
      ...base,
      map: {
        ...withShed,
        rev: 12,
        sheds: { a: { ...shed, below_since: "2026-01-01T00:00:30.000Z" } },
      },
    };
    expect(view.routesDue()).toBeNull();
    const stepped = {
      ...withShed,
      rev: 13,
      sheds: { a: { share: 30, at: "2026-01-01T00:01:30.000Z" } },
    };
    view.desired = { ...base, map: stepped };
    expect(view.routesDue()).toBe(stepped);
  });

  it("owes routes for the same routing in another etcd history", () => {
    const view = new KvView("p1");
    view.learned(compiled(10, "a").map, 1);
    const next = compiled(3, "a");
    view.desired = { ...next, map: { ...next.map, history: 1 } };
    expect(view.routesDue()).toBe(view.desired.map);
  });

  it("describes what KV holds in meta while the newest compile is older than it", () => {
    const view = new KvView("p1");
    const kv = compiled(11, "a").map;
    view.learned(kv, 1);
    view.desired = compiled(10, "a");
    expect(view.metaSource()).toBe(kv);
    view.awaitingCompile = true;
    view.desired = compiled(12, "a");
    expect(view.metaSource()).toBe(kv);
  });
});
