import type { Etcd3, Lease } from "etcd3";
import { COUNTRIES } from "../../../testkit/sample-countries.js";
import { POOLS } from "./etcd-world.js";

type Rand = () => number;
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;

/** A random valid country rule over the always-defined pools. */
export function randomRule(r: Rand): string {
  const primary = pick(r, POOLS);
  const rest = POOLS.filter((p) => p !== primary).sort(() => r() - 0.5);
  return JSON.stringify({ primary, fallbacks: rest.slice(0, Math.floor(r() * 4)) });
}

/** What kind of write `randomWrite` made. */
export type WriteKind = "put" | "delete" | "txn" | "lease-grant" | "lease-revoke" | "override";

/**
 * Random intent writes that are all valid (so the expected map depends only on the final state,
 * never on history): country puts/deletes, multi-key transactions, overrides, the epoch, and
 * health keys attached to leases that are granted and revoked.
 */
export class IntentWriter {
  readonly leases: Lease[] = [];
  private epoch = 1;

  constructor(
    private readonly client: Etcd3,
    private readonly prefix: string,
    private readonly r: Rand,
  ) {}

  /** Performs one random write; throws when etcd refuses or is down. */
  async write(): Promise<WriteKind> {
    const { client, prefix, r } = this;
    const x = r();
    const cc = pick(r, COUNTRIES);
    if (x < 0.45) {
      await client.put(`${prefix}country/${cc}`).value(randomRule(r)).exec();
      return "put";
    }
    if (x < 0.55) {
      await client.delete().key(`${prefix}country/${cc}`).exec();
      return "delete";
    }
    if (x < 0.7) {
      const keys = new Set(
        Array.from({ length: 2 + Math.floor(r() * 3) }, () => pick(r, COUNTRIES)),
      );
      const ops = [...keys].map((c) => {
        return r() < 0.75
          ? client.put(`${prefix}country/${c}`).value(randomRule(r))
          : client.delete().key(`${prefix}country/${c}`);
      });
      this.epoch += 1;
      await client
        .if(`${prefix}epoch`, "Version", "<", 1_000_000_000)
        .then(...ops, client.put(`${prefix}epoch`).value(String(this.epoch)))
        .commit();
      return "txn";
    }
    if (x < 0.8) {
      if (r() < 0.6) {
        const rule = JSON.parse(randomRule(r)) as object;
        await client
          .put(`${prefix}override/${cc}`)
          .value(JSON.stringify({ ...rule, reason: "fault test" }))
          .exec();
      } else {
        await client.delete().key(`${prefix}override/${cc}`).exec();
      }
      return "override";
    }
    if (x < 0.9 || this.leases.length === 0) {
      const lease = client.lease(600, { autoKeepAlive: false });
      lease.on("lost", () => {});
      const status = pick(r, ["healthy", "healthy", "healthy", "draining", "unhealthy"]);
      await lease
        .put(`${prefix}health/${pick(r, POOLS)}`)
        .value(JSON.stringify({ status }))
        .exec();
      this.leases.push(lease);
      return "lease-grant";
    }
    const lease = this.leases.splice(Math.floor(r() * this.leases.length), 1)[0];
    if (lease) await lease.revoke();
    return "lease-revoke";
  }
}
