import { setTimeout as sleep } from "node:timers/promises";
import type { CompiledMap } from "../../../core/index.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import type { RelayMode } from "../support/edge-relay.js";
import { deShed, routingOf, type ViewersWorld, viewersWorld } from "../support/viewers-world.js";

/** One way the observations fail, and what the observer's `/status` must then say. */
interface ObserverFault {
  readonly name: string;
  readonly mode: RelayMode;
  readonly reason: string;
  /** Whether `edgectl top` through the same path fails too (a slow edge still answers it). */
  readonly topFails: boolean;
}

const FAULTS: readonly ObserverFault[] = [
  { name: "edge unreachable", mode: "down", reason: "edge-unreachable", topFails: true },
  { name: "aggregator slow", mode: "slow", reason: "edge-unreachable", topFails: false },
  { name: "wrong token", mode: "wrong-token", reason: "unauthorized", topFails: true },
  {
    name: "Durable Object unavailable",
    mode: "no-aggregator",
    reason: "edge-status",
    topFails: true,
  },
];

/** Polls `fn` until it returns a value, or null after `timeoutMs`. */
async function until<T>(fn: () => Promise<T | null>, timeoutMs: number): Promise<T | null> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > deadline) return null;
    await sleep(200);
  }
}

/** Waits until KV's routing is the checkers' alone; the ms it took, or null. */
async function untilCheckersAlone(w: ViewersWorld, timeoutMs: number): Promise<number | null> {
  const t0 = Date.now();
  const done = await until(async () => {
    const m = w.kv.routes();
    return m && routingOf(m) === routingOf(await w.checkersMap()) ? true : null;
  }, timeoutMs);
  return done ? Date.now() - t0 : null;
}

export const viewersObserverFaults: Scenario = {
  id: 22,
  title: "the viewers' observations fail",
  invariant:
    "DE's viewers of fra-1 (viewers: true) are slow, its checkers fast, so DE sheds by viewers; then the edge unreachable, its aggregator slow, a wrong token, the Durable Object unavailable, the observer killed, and junk observed/ values: each is said on the observer's /status (or its silence) and by edgectl top, no map ever sheds more than before, and KV's routing becomes exactly the map compiled without observed/ keys (the checkers' alone), which junk never leaves",
  budgetMs: () => 480_000,
  async run(ctx) {
    const inv = new Invariants();
    const w = await viewersWorld(ctx);
    const figures: string[] = [];
    const notes: string[] = [];
    const shedNow = async (what: string) => {
      const m = await w.waitMap(`DE shed by viewers (${what})`, (x) => deShed(x) > 0, 60_000);
      const ok = await until(async () => {
        const s = await w.observerStatus();
        return s?.status === "ok" && s.registered ? s : null;
      }, 10_000);
      inv.check(ok !== null, "the observer did not come back to ok", () => what);
      return m;
    };
    await shedNow("with every part well");
    ctx.progress("DE shed by viewers; failing the observations one way at a time");

    for (const f of FAULTS) {
      const from = w.kv.writes.length;
      const before = deShed(w.kv.routes() as CompiledMap);
      w.relay.mode = f.mode;
      const said = await until(async () => {
        const s = await w.observerStatus();
        return s?.reason === f.reason ? s : null;
      }, 15_000);
      inv.check(said !== null, `${f.name}: /status never said ${f.reason}`, () =>
        JSON.stringify(said),
      );
      const top = await w.top();
      inv.check(
        (top.code !== 0) === f.topFails,
        `${f.name}: edgectl top ${f.topFails ? "did not fail" : "failed"}`,
        () => `${top.code}: ${top.said}`,
      );
      notes.push(
        `${f.name}: /status reason ${said?.reason ?? "?"}; top exit ${top.code}: ${top.said}`,
      );
      const ms = await untilCheckersAlone(w, 150_000);
      inv.check(ms !== null, `${f.name}: KV's routing never became the checkers' alone`, () =>
        JSON.stringify(w.kv.routes()?.countries.DE),
      );
      const status = await w.observerStatus();
      inv.check(status?.released === true, `${f.name}: /status does not say released`, () =>
        JSON.stringify(status),
      );
      const left = await w.observedKeys();
      inv.check(left.length === 0, `${f.name}: observed/ keys outlived the lease`, () =>
        left.join(","),
      );
      for (const wr of w.kv.writes.slice(from)) {
        if (wr.key !== "routes") continue;
        const m = JSON.parse(wr.value) as CompiledMap;
        inv.check(
          deShed(m) <= before,
          `${f.name}: a map shed DE more while blind`,
          () => `rev ${m.rev}: ${deShed(m)} > ${before}`,
        );
        inv.check(
          (m.countries.DE?.chain ?? []).every((c) => c.pool === "fra-1" || c.pool === "ams-1"),
          `${f.name}: a map sent DE outside its rule`,
          () => JSON.stringify(m.countries.DE),
        );
      }
      figures.push(`${f.name} ${ms === null ? "never" : secs(ms)}`);
      w.relay.mode = "pass";
      await shedNow(`after ${f.name}`);
    }

    // The observer killed: its lease lapses, its keys go; the edge itself still answers top.
    await w.observer().kill9();
    const killedMs = await untilCheckersAlone(w, 60_000);
    inv.check(killedMs !== null, "observer killed: KV's routing never became the checkers'", () =>
      JSON.stringify(w.kv.routes()?.countries.DE),
    );
    inv.check(
      (await w.observerStatus()) === null,
      "observer killed: /status still answers",
      () => "",
    );
    const top = await w.top();
    inv.check(
      top.code === 0,
      "observer killed: edgectl top (the edge's own figures) failed",
      () => top.said,
    );
    notes.push(`observer killed: /status refused; top exit ${top.code}: ${top.said}`);
    figures.push(`killed ${killedMs === null ? "never" : secs(killedMs)}`);

    // Junk observed/ values (written past the observer, no lease): reported, never counted.
    const junk: Record<string, string> = {
      "observed/DE/fra-1": "<html>\u001b[31m not json",
      "observed/FR/fra-1": JSON.stringify({ p90_ms: -5, samples: "many" }),
    };
    for (const [k, v] of Object.entries(junk)) await w.client.put(`${w.prefix}${k}`).value(v);
    const reported = await until(async () => {
      const p = (await w.pusher.status())?.problems ?? [];
      return Object.keys(junk).every((k) => p.some((x) => x.startsWith(k))) ? p : null;
    }, 30_000);
    inv.check(reported !== null, "junk observed/: the pusher's /status does not report it", () =>
      JSON.stringify(w.kv.routes()?.problems),
    );
    const after = w.kv.writes.length;
    await sleep(3_000);
    const final = w.kv.routes();
    inv.check(
      final !== null && routingOf(final) === routingOf(await w.checkersMap()),
      "junk observed/: KV's routing is not the checkers' alone",
      () => JSON.stringify(final?.countries),
    );
    for (const wr of w.kv.writes.slice(after))
      if (wr.key === "routes")
        inv.check(deShed(JSON.parse(wr.value) as CompiledMap) === 0, "junk observed/ shed DE", () =>
          wr.value.slice(0, 200),
        );
    inv.check(
      !JSON.stringify(final?.problems ?? []).includes("\u001b"),
      "junk observed/: an escape reached the map's problems",
      () => "",
    );
    const junkTop = await w.top();
    notes.push(
      `junk observed/: pusher /status ${reported?.filter((p) => p.startsWith("observed/")).join("; ") ?? "-"}; top exit ${junkTop.code}: ${junkTop.said}`,
    );
    inv.check(w.pusher.proc.alive(), "pusher exited", () => w.pusher.proc.output().slice(-300));
    return {
      runs: FAULTS.length + 2,
      figure: `routing the checkers' alone after: ${figures.join(", ")}`,
      failures: inv.failures(),
      notes,
    };
  },
};
