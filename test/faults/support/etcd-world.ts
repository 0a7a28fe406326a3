import { Etcd3 } from "etcd3";
import { parseMap } from "../../../core/index.js";
import { type EtcdServer, startEtcd } from "../../../testkit/etcd.js";
import { COUNTRIES } from "../../../testkit/sample-countries.js";
import type { FaultContext } from "../scenario.js";

/** The pools every scenario world defines (always present, so rules never dangle). */
export const POOLS = ["fra-1", "ams-1", "par-1", "waw-1", "mad-1"] as const;

/** A unique prefix and election key for one scenario. */
export function names(tag: string): { prefix: string; electionKey: string } {
  const id = Math.random().toString(36).slice(2, 8);
  return { prefix: `/faults/${tag}-${id}/routing/v1/`, electionKey: `/faults/${tag}-${id}/leader` };
}

/** Starts a real etcd, stopped with the scenario. */
export async function scenarioEtcd(
  ctx: FaultContext,
  extraArgs: string[] = [],
): Promise<EtcdServer> {
  const etcd = await startEtcd({ extraArgs });
  ctx.defer(() => etcd.stop());
  return etcd;
}

/** An etcd3 client of the test's own, closed with the scenario. */
export function testClient(
  ctx: FaultContext,
  endpoint: string,
  auth?: { username: string; password: string },
): Etcd3 {
  const client = new Etcd3({ hosts: endpoint, ...(auth ? { auth } : {}) });
  ctx.defer(() => client.close());
  return client;
}

/** Writes a valid base world: pools, healthy health keys (no lease), `_default`, a few countries. */
export async function seedWorld(client: Etcd3, prefix: string, countries = 10): Promise<void> {
  const ops = [];
  for (const pool of POOLS) {
    ops.push(
      client
        .put(`${prefix}pool/${pool}`)
        .value(JSON.stringify({ origin: `https://${pool}.example.net` })),
    );
    ops.push(client.put(`${prefix}health/${pool}`).value(JSON.stringify({ status: "healthy" })));
  }
  ops.push(
    client
      .put(`${prefix}country/_default`)
      .value(JSON.stringify({ primary: "ams-1", fallbacks: ["par-1"] })),
  );
  for (const [i, cc] of COUNTRIES.slice(0, countries).entries()) {
    ops.push(
      client.put(`${prefix}country/${cc}`).value(
        JSON.stringify({
          primary: POOLS[i % POOLS.length],
          fallbacks: [POOLS[(i + 1) % POOLS.length]],
        }),
      ),
    );
  }
  ops.push(client.put(`${prefix}epoch`).value("1"));
  await Promise.all(ops.map((o) => o.exec()));
}

/** Parses a routes text, for writes recorded by the stand-in. */
export { parseMap };
