import type { Etcd3 } from "etcd3";

/** First releases that refuse a from-key watch past a single-key grant (docs/reference.md §7). */
const FROM_KEY_FIXED: Record<string, number> = { "3.5": 33, "3.6": 14, "3.7": 1 };

/** Whether this etcd release lets a from-key watch see past a single-key grant (GHSA-xg4h-6gfc-h4m8). */
export function fromKeyWatchVulnerable(version: string): boolean {
  const m = /^(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  if (Number(m[1]) === 3 && Number(m[2]) <= 4) return true;
  const fixed = FROM_KEY_FIXED[`${m[1]}.${m[2]}`];
  return fixed !== undefined && Number(m[3]) < fixed;
}

/**
 * As a user who may read exactly `grantedKey`, opens a watch from that key to the end of the
 * keyspace (range end `\0`, `clientv3.WithFromKey()`), replaying from `fromRev`, and reports
 * whether it delivered `otherKey` (written at `fromRev` by someone else): "allowed" means the
 * grant was bypassed, "refused" that etcd cancelled the watch for permission.
 */
export async function fromKeyWatchProbe(
  client: Etcd3,
  grantedKey: string,
  otherKey: string,
  fromRev: number,
  waitMs = 3_000,
): Promise<"allowed" | "refused" | "no events" | string> {
  return new Promise((resolve) => {
    let done = false;
    let watcherRef: { cancel(): Promise<void> } | undefined;
    const finish = (v: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      void watcherRef?.cancel().catch(() => undefined);
      resolve(v);
    };
    const timer = setTimeout(() => finish("no events"), waitMs);
    const builder = client
      .watch()
      .inRange({ start: grantedKey, end: Buffer.from([0]) })
      .startRevision(String(fromRev));
    builder
      .create()
      .then((w) => {
        watcherRef = w;
        w.on("put", (kv) => {
          if (kv.key.toString("utf8") === otherKey) finish("allowed");
        });
        w.on("error", (e: Error) =>
          finish(/permission denied/i.test(e.message) ? "refused" : `error: ${e.message}`),
        );
        if (done) void w.cancel().catch(() => undefined);
      })
      .catch((e: unknown) => {
        const msg = e instanceof Error ? e.message : String(e);
        finish(/permission denied/i.test(msg) ? "refused" : `error: ${msg}`);
      });
  });
}
