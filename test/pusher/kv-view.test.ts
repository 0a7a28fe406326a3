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
    { prefix, floorPool: "a", originTemplate: "https://{pool}.example.net", now: new Date(0) },
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
