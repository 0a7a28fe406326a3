import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { stringify } from "yaml";
import { type CompiledMap, compile, serializeMap } from "../../../core/index.js";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { readSnapshot } from "../../../testkit/map-oracle.js";
import { type ReceivedRequest, startOrigins } from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { Invariants, type Scenario } from "../scenario.js";
import { edgectlInProcess } from "../support/edgectl.js";
import { names, scenarioEtcd, testClient } from "../support/etcd-world.js";

const EU = ["fra-1", "ams-1", "waw-1", "par-1"] as const;
const OUTSIDE = ["use-1", "sgp-1"] as const;
const REGION: Readonly<Record<string, string>> = {
  "fra-1": "eu-central",
  "waw-1": "eu-central",
  "ams-1": "eu-west",
  "par-1": "eu-west",
  "use-1": "us-east",
  "sgp-1": "ap-southeast",
};
const FENCED = ["DE", "FR", "NL", "PL", "IT", "CH", "ES", "SE"] as const;
/** The fence's floor stays up: every fenced request can be served inside the fence. */
const FLOOR = "par-1";
/** The order the EU pools die in (the floor last, never). */
const DYING = ["fra-1", "ams-1", "waw-1"] as const;

export const residencyUnderFire: Scenario = {
  id: 20,
  title: "residency under fire",
  invariant:
    "EU pools die one by one (health says so, or only their origin dies) while boosts and a percentage boost target a non-EU pool and _default names one: every fenced request is served, 0 outside the fence (docs/reference.md §10)",
  budgetMs: (q) => (q ? 90_000 : 240_000),
  async run(ctx) {
    const total = ctx.quick ? 2_000 : 10_000;
    const inv = new Invariants();
    const r = seededRandom(ctx.seed);
    const etcd = await scenarioEtcd(ctx);
    const client = testClient(ctx, etcd.endpoint);
    const { prefix } = names("fence");
    const env = { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix, FLOOR_POOL: FLOOR };
    const origins = await startOrigins([...EU, ...OUTSIDE]);
    ctx.defer(() => origins.close());
    const worker = await startWorker({ MAX_ATTEMPTS: "3", FLOOR_POOL: FLOOR });
    ctx.defer(() => worker.dispose());

    // Intent through edgectl: Europe and CH fenced, _default on a US pool.
    const dir = mkdtempSync(join(tmpdir(), "s18-"));
    ctx.defer(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, "desired.yaml");
    const pools = Object.fromEntries(
      [...EU, ...OUTSIDE].map((p) => [p, { origin: origins.get(p).url, region: REGION[p] }]),
    );
    writeFileSync(
      file,
      stringify({
        pools,
        countries: {
          _default: { primary: "use-1", fallbacks: ["par-1"] },
          EU: { primary: "fra-1", fallbacks: ["ams-1", "waw-1", "par-1"] },
          DE: { primary: "fra-1", fallbacks: ["waw-1", "par-1"] },
        },
        fences: {
          eu: {
            continents: ["EU"],
            countries: ["CH"],
            regions: ["eu-central", "eu-west"],
            floor: FLOOR,
          },
        },
      }),
    );
    const applied = await edgectlInProcess(ctx, ["apply", file, "--yes"], env);
    if (applied.code !== 0) throw new Error(`apply exited ${applied.code}: ${applied.stderr}`);
    for (const p of [...EU, ...OUTSIDE])
      await client.put(`${prefix}health/${p}`).value('{"status":"healthy"}');

    // edgectl refuses the crossing boosts ...
    for (const argv of [
      ["boost", "DE", "--pool", "use-1", "--ttl", "1h"],
      ["boost", "FR", "--pool", "sgp-1", "--percent", "40", "--ttl", "1h"],
    ]) {
      const refused = await edgectlInProcess(ctx, argv, env);
      inv.check(
        refused.code === 1 && refused.stderr.includes("outside fence eu"),
        "edgectl let a crossing boost through",
        () => `${argv.join(" ")} → ${refused.code}: ${refused.stderr.slice(0, 200)}`,
      );
    }
    // ... so they are written behind its back, as a stale script or an old binary would.
    const later = new Date(Date.now() + 3_600_000).toISOString();
    const raw = {
      "override/DE": { primary: "use-1", fallbacks: ["fra-1"], reason: "s18", expires_at: later },
      "override/FR": {
        primary: "ams-1",
        fallbacks: ["sgp-1"],
        weights: { "ams-1": 60, "sgp-1": 40 },
        reason: "s18 percent",
        expires_at: later,
      },
      "override/EU": { primary: "use-1", fallbacks: ["par-1"], reason: "s18", expires_at: later },
      "override/CH": { primary: "sgp-1", reason: "s18", expires_at: later },
    };
    for (const [k, v] of Object.entries(raw))
      await client.put(`${prefix}${k}`).value(JSON.stringify(v));

    let previous: CompiledMap | null = null;
    const push = async () => {
      const map = compile(await readSnapshot(client, prefix), {
        prefix,
        floorPool: FLOOR,
        originTemplate: "https://{pool}.origin.example.com",
        now: new Date(),
        carried: previous,
      }).map;
      previous = map;
      await worker.putMap(serializeMap(map));
      return map;
    };

    // Stages: all up; then each EU pool dies, first only its origin (health still says
    // healthy: request-time failover), then health catches up.
    const stages: { name: string; apply: () => Promise<void> }[] = [
      { name: "all up", apply: async () => {} },
    ];
    for (const p of DYING) {
      stages.push({ name: `${p} origin dead`, apply: () => origins.get(p).kill() });
      stages.push({
        name: `${p} unhealthy`,
        apply: async () => {
          await client.put(`${prefix}health/${p}`).value('{"status":"unhealthy"}');
        },
      });
    }
    const per = Math.ceil(total / stages.length);
    let sent = 0;
    let served = 0;
    const byPool = new Map<string, number>();
    for (const stage of stages) {
      await stage.apply();
      const map = await push();
      for (const cc of FENCED) {
        const route = map.countries[cc];
        const outside = (route?.chain ?? [])
          .map((c) => c.pool)
          .filter((p) => !EU.includes(p as never));
        inv.check(
          route?.fence === "eu" && outside.length === 0,
          "a fenced route leaves the fence",
          () => `${stage.name}: ${cc} ${JSON.stringify(route ?? null).slice(0, 200)}`,
        );
      }
      ctx.progress(`${stage.name}: ${per} requests`);
      const batch = 16;
      for (let i = 0; i < per && sent < total; i += batch) {
        const n = Math.min(batch, per - i, total - sent);
        await Promise.all(
          Array.from({ length: n }, async () => {
            const cc = FENCED[Math.floor(r() * FENCED.length)] ?? "DE";
            const ip = `198.51.${Math.floor(r() * 255)}.${Math.floor(r() * 255)}`;
            const res = await worker.dispatch(`/seg-${sent}.ts`, {
              country: cc,
              headers: { "CF-Connecting-IP": ip },
            });
            sent += 1;
            const pool = res.headers.get("x-edge-pool") ?? "";
            let origin = "";
            try {
              origin = res.json<ReceivedRequest>().origin;
            } catch {
              // not an origin's answer
            }
            inv.check(
              res.status === 200 && origin !== "",
              "a fenced request was not served",
              () =>
                `${stage.name}: ${cc} → ${res.status} ${res.headers.get("x-edge-failover") ?? ""}`,
            );
            inv.check(
              EU.includes(pool as never) && (origin === "" || EU.includes(origin as never)),
              "served outside the fence",
              () => `${stage.name}: ${cc} → pool ${pool}, origin ${origin}`,
            );
            inv.check(
              res.headers.get("x-edge-fence") === "eu",
              "no X-Edge-Fence",
              () => `${stage.name}: ${cc}`,
            );
            if (res.status === 200) served += 1;
            byPool.set(pool, (byPool.get(pool) ?? 0) + 1);
          }),
        );
      }
    }
    const outsideHits = OUTSIDE.reduce((n, p) => n + origins.get(p).hits, 0);
    inv.check(outsideHits === 0, "a non-EU origin was asked", () => `${outsideHits} requests`);
    const spread = [...byPool]
      .sort()
      .map(([p, n]) => `${p} ${n}`)
      .join(", ");
    return {
      runs: sent,
      figure: `${sent} fenced requests over ${stages.length} stages: ${served} served, ${outsideHits} reached a non-EU origin (${spread})`,
      failures: inv.failures(),
    };
  },
};
