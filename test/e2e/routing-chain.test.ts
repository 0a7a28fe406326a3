import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDemoOrigin } from "../../scripts/stack/demo-origin-server.js";
import {
  type E2eStack,
  type EdgeReply,
  eventually,
  type Pool,
  startE2eStack,
} from "../helpers/stack.js";

// One real chain for the whole file: etcd → pusher (local KV) → Worker in workerd → demo origins.
// Tests run in order and each leaves the stack as the next expects it.
let stack: E2eStack;

beforeAll(async () => {
  // A TTL well above a starved heartbeat's worst pause on a busy 2-core runner.
  stack = await startE2eStack({ heartbeatTtl: 5 });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
}, 60_000);

interface OriginBody {
  pool: string;
  path: string;
  headers: Record<string, string>;
}

/** Waits until `country` is served by `pool` (checked at the origin too) and returns that reply. */
async function servedBy(country: string, pool: Pool, timeoutMs = 30_000): Promise<EdgeReply> {
  return eventually(
    async () => {
      const r = await stack.request(country, "/probe");
      return r.status === 200 && r.headers.get("x-edge-pool") === pool ? r : undefined;
    },
    `${country} served by ${pool}\n${stack.logs().slice(-3000)}`,
    timeoutMs,
  );
}

describe("end to end: etcd → pusher → KV → Worker → origin", () => {
  it("serves the applied map: country rule and _default, proxied to the right origin", async () => {
    const de = await servedBy("DE", "fra-1");
    const body = JSON.parse(de.body) as OriginBody;
    expect(body.pool).toBe("fra-1");
    expect(body.path).toBe("/probe");
    expect(body.headers["x-edge-country"]).toBe("DE");
    expect(body.headers["x-edge-hop"]).toBe("1");
    expect(de.headers.get("x-edge-source")).toBe("country/DE");
    expect(Number(de.headers.get("x-edge-revision"))).toBeGreaterThan(0);
    expect(de.headers.get("x-edge-degraded")).toBeNull();

    const fr = await servedBy("FR", "ams-1");
    expect(fr.headers.get("x-edge-source")).toBe("country/_default");
  });

  it("a routing change made with `edgectl apply` shows up in X-Edge-Pool", async () => {
    const changed = stack.writeDesired({
      _default: { primary: "ams-1", fallbacks: ["par-1"] },
      DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
      FR: { primary: "par-1", fallbacks: ["ams-1"] },
    });
    const res = await stack.edgectl("apply", changed, "--yes");
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const fr = await servedBy("FR", "par-1");
    expect(fr.headers.get("x-edge-source")).toBe("country/FR");
    expect((JSON.parse(fr.body) as OriginBody).pool).toBe("par-1");
    // DE is untouched by that change.
    expect((await stack.request("DE")).headers.get("x-edge-pool")).toBe("fra-1");
  });

  it("a boost switches the pool, then expires by itself", async () => {
    const res = await stack.edgectl(
      "boost",
      "DE",
      "--pool",
      "ams-1",
      "--ttl",
      "3s",
      "--reason",
      "e2e",
    );
    expect(res.code, res.stdout + res.stderr).toBe(0);
    const boosted = await servedBy("DE", "ams-1");
    expect(boosted.headers.get("x-edge-source")).toBe("override/DE");
    // The lease lapses (3 s TTL), the override key disappears, DE returns to its own rule.
    const back = await servedBy("DE", "fra-1");
    expect(back.headers.get("x-edge-source")).toBe("country/DE");
  });

  it("a killed heartbeat (kill -9) fails the country over to the next pool, and back", async () => {
    const hb = stack.heartbeat("fra-1");
    expect(hb).toBeDefined();
    process.kill(hb!.pid, "SIGKILL");
    await hb!.exited;
    const failed = await servedBy("DE", "ams-1");
    expect(failed.headers.get("x-edge-source")).toBe("country/DE");
    expect(failed.headers.get("x-edge-failover")).toBeNull();

    stack.startHeartbeat("fra-1");
    await servedBy("DE", "fra-1");
  });

  it("an origin that refuses connections while still marked healthy is failed over per request", async () => {
    const fra = stack.origins.get("fra-1")!;
    const port = fra.port;
    await fra.close();
    try {
      const r = await stack.request("DE", "/video/1.ts");
      expect(r.status).toBe(200);
      expect(r.headers.get("x-edge-pool")).toBe("ams-1");
      expect(r.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
      expect(r.headers.get("x-edge-degraded")).toBe("origin-failover");
      const body = JSON.parse(r.body) as OriginBody;
      expect(body.pool).toBe("ams-1");
      expect(body.path).toBe("/video/1.ts");
    } finally {
      const again = await startDemoOrigin({ pool: "fra-1", port });
      stack.origins.set("fra-1", again);
    }
    const healed = await servedBy("DE", "fra-1");
    expect(healed.headers.get("x-edge-failover")).toBeNull();
  });

  it("with the pusher stopped the edge keeps serving the last map; a restarted pusher catches up", async () => {
    const before = await servedBy("DE", "fra-1");
    const rev = before.headers.get("x-edge-revision");
    const pusher = stack.pusher!;
    process.kill(pusher.pid, "SIGTERM");
    // (Its exit status is the pusher's own tests' business; here only what the edge does matters.)
    await pusher.exited;

    const res = await stack.edgectl("boost", "DE", "--pool", "par-1", "--ttl", "60s");
    expect(res.code, res.stdout + res.stderr).toBe(0);
    // Several isolate-cache periods (1 s) pass: the edge still answers from the last map.
    for (let i = 0; i < 6; i++) {
      const r = await stack.request("DE");
      expect(r.status).toBe(200);
      expect(r.headers.get("x-edge-pool")).toBe("fra-1");
      expect(r.headers.get("x-edge-revision")).toBe(rev);
      expect(r.headers.get("x-edge-degraded")).toBeNull();
      await new Promise((done) => setTimeout(done, 500));
    }

    stack.startPusher();
    const caughtUp = await servedBy("DE", "par-1", 60_000);
    expect(caughtUp.headers.get("x-edge-source")).toBe("override/DE");
    expect(Number(caughtUp.headers.get("x-edge-revision"))).toBeGreaterThan(Number(rev));
  });
});
