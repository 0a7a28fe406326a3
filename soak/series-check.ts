import { setTimeout as sleep } from "node:timers/promises";
import { parsePromText } from "../testkit/prom-text.js";
import { anyMember } from "./oracle.js";
import type { World } from "./world.js";

/**
 * Per-pool series of every live pusher whose pool has no `pool/` definition in etcd (the
 * driver's temporary pools are deleted within 4 s), as failure texts; checked 3 s after the
 * driver stopped, so the last deletion has been compiled.
 */
export async function seriesLeftByRemovedPools(world: World): Promise<string[]> {
  await sleep(3_000);
  const defined = await anyMember(world, async (c) => {
    const res = await c.getAll().prefix(`${world.prefix}pool/`).keys();
    return new Set(res.map((k) => k.slice(`${world.prefix}pool/`.length)));
  });
  const out: string[] = [];
  for (const p of [...world.pushers, world.snapshot].filter((x) => x.process.proc.alive())) {
    const text = await p.process.metrics();
    if (text === null) continue;
    const stale = parsePromText(text).filter(
      (s) => s.labels.pool?.startsWith("tmp-") && !defined.has(s.labels.pool),
    );
    if (stale.length > 0)
      out.push(
        `pusher ${p.id} keeps ${stale.length} series of removed pools, e.g. ${stale
          .slice(0, 3)
          .map((s) => `${s.name}{pool="${s.labels.pool}"}`)
          .join(", ")}`,
      );
  }
  return out;
}
