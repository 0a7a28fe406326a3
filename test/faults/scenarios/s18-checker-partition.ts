import { setTimeout as sleep } from "node:timers/promises";
import { startOrigins } from "../../../testkit/origins.js";
import { startTcpProxy, type TcpProxy } from "../../../testkit/tcp-proxy.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { CHECKED_COUNTRIES, checkedRoutes, checkerWorld } from "../support/checker-world.js";
import { parseMap } from "../support/etcd-world.js";

const CHECKERS = ["c1", "c2", "c3"] as const;

export const checkerPartition: Scenario = {
  id: 18,
  title: "one of three checkers cut off from its pool",
  invariant:
    "fra-1 has 3 checkers (real edgectl heartbeat --checker, each probing the pool through its own TCP path); one path refuses every connection for 60 s (20 s quick): that checker says unhealthy, and still 0 KV maps drop fra-1 and 0 move any of its viewers (DE, FR, NL routes unchanged)",
  budgetMs: (q) => (q ? 90_000 : 150_000),
  async run(ctx) {
    const cutMs = ctx.quick ? 20_000 : 60_000;
    const inv = new Invariants();
    const origins = await startOrigins(["fra-1"]);
    ctx.defer(() => origins.close());
    const port = origins.get("fra-1").port;
    const paths: TcpProxy[] = [];
    for (const _ of CHECKERS) {
      const p = await startTcpProxy(port);
      ctx.defer(() => p.close());
      paths.push(p);
    }
    const world = await checkerWorld(ctx, "chkpart", {});
    const procs = CHECKERS.map((name, i) =>
      world.checker(name, `${paths[i]?.endpoint}/healthz`, [
        "--ttl",
        "5",
        "--interval",
        "0.5",
        "--check-timeout",
        "1",
      ]),
    );
    await world.waitCheckers(CHECKERS.length);
    const base = await world.waitMap("fra-1 serving DE, FR, NL", (m) =>
      CHECKED_COUNTRIES.every((cc) => m.countries[cc]?.pool === "fra-1"),
    );
    const baseline = checkedRoutes(base);
    const from = world.kv.writes.length;
    ctx.progress(`3 checkers on fra-1, map in KV; cutting c1 off for ${secs(cutMs)}`);

    const cut = paths[0];
    if (!cut) throw new Error("no path");
    cut.disconnect();
    const seen = new Map<string, Set<string>>(CHECKERS.map((c) => [c, new Set<string>()]));
    let cutSeenAt: number | null = null;
    const t0 = Date.now();
    while (Date.now() - t0 < cutMs) {
      for (const c of CHECKERS) {
        const v = await world.checkerValue(c);
        seen.get(c)?.add(v?.status ?? "missing");
        if (c === "c1" && v?.status === "unhealthy" && cutSeenAt === null) cutSeenAt = Date.now();
      }
      await sleep(500);
    }
    cut.accept();
    let healed = false;
    for (let i = 0; i < 40 && !healed; i++) {
      healed = (await world.checkerValue("c1"))?.status === "healthy";
      if (!healed) await sleep(250);
    }
    // what the pusher made of the recovery reaches KV too
    await sleep(2_000);

    inv.check(
      seen.get("c1")?.has("unhealthy") ?? false,
      "the cut-off checker never said unhealthy (the cut did not bite)",
      () => [...(seen.get("c1") ?? [])].join(","),
    );
    for (const c of ["c2", "c3"]) {
      const s = [...(seen.get(c) ?? [])];
      inv.check(
        s.length === 1 && s[0] === "healthy",
        `checker ${c} was not healthy throughout`,
        () => s.join(","),
      );
    }
    inv.check(healed, "the cut-off checker did not come back to healthy", () => "");
    let drops = 0;
    let moves = 0;
    const writes = world.kv.writes.slice(from).filter((w) => w.key === "routes");
    for (const w of writes) {
      const m = parseMap(w.value);
      if (!m) continue;
      const dropped = CHECKED_COUNTRIES.filter((cc) => m.countries[cc]?.pool !== "fra-1");
      if (dropped.length > 0) drops += 1;
      if (checkedRoutes(m) !== baseline) moves += 1;
      inv.check(dropped.length === 0, "a map dropped fra-1", () => `rev ${m.rev}: ${dropped}`);
      inv.check(
        checkedRoutes(m) === baseline,
        "a map moved fra-1's viewers",
        () => `rev ${m.rev}: ${checkedRoutes(m)}`,
      );
    }
    for (const p of procs)
      inv.check(p.alive(), `checker ${p.name} exited`, () => p.output().slice(-300));
    inv.check(world.pusher.proc.alive(), "pusher exited", () =>
      world.pusher.proc.output().slice(-300),
    );
    return {
      runs: 1,
      figure: `c1 cut for ${secs(cutMs)} (unhealthy after ${cutSeenAt === null ? "never" : secs(cutSeenAt - t0)}): ${drops} pool drops, ${moves} viewer moves in ${writes.length} routes writes`,
      failures: inv.failures(),
    };
  },
};
