import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settledLeases } from "../../soak/oracle.js";
import type { World } from "../../soak/world.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";

let etcd: EtcdServer;
let client: Etcd3;
beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
});
afterAll(async () => {
  client.close();
  await etcd.stop();
});

/** The part of a soak world the lease count reads: one running member. */
const world = (prefix: string) =>
  ({ members: [client], cluster: { members: [{ running: true }] }, prefix }) as unknown as World;

describe("settledLeases", () => {
  it("waits out a lease nothing holds, and stops waiting at the deadline", async () => {
    const prefix = `/soak-oracle-${Date.now()}/`;
    // Two held leases (a heartbeat's, a pusher's), one granted and lost, as a retried grant leaves.
    const held = [
      client.lease(60, { autoKeepAlive: false }),
      client.lease(60, { autoKeepAlive: false }),
    ];
    await Promise.all(held.map((l) => l.grant()));
    const orphan = client.lease(2, { autoKeepAlive: false });
    await orphan.grant();
    const before = (await client.leaseClient.leaseLeases()).leases.length;

    const started = Date.now();
    expect(await settledLeases(world(prefix), before - 1, 10_000)).toBe(before - 1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
    // A count that never comes: the last one stands once the wait is over.
    const waited = Date.now();
    expect(await settledLeases(world(prefix), before + 5, 1_200)).toBe(before - 1);
    expect(Date.now() - waited).toBeGreaterThanOrEqual(1_200);
    await Promise.all(held.map((l) => l.revoke()));
  });
});
