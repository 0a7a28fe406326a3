import type { Sample } from "./samples.js";

/** Minutes at each end of the window whose highest count is compared. */
const END_SECONDS = 300;

/**
 * Which holders of an etcd member's descriptors rose over the window from `from` (s): for each
 * of its `sockets` series (`etcd:m0<-peer`…), the highest count of the window's last 5 minutes
 * against its first 5, listed when it rose (`peer +5 (12→17)`). `fdsSeries` is the member's
 * `fds` or `fds_less_peers` series (`etcd:m0#4242`); null when it is not an etcd member's or nothing rose.
 */
export function socketGrowth(
  samples: readonly Sample[],
  fdsSeries: string,
  from: number,
): string | null {
  const member = /^(etcd:[^#]+)#/.exec(fdsSeries)?.[1];
  if (!member) return null;
  const prefix = `${member}<-`;
  const mine = samples.filter(
    (s) => s.figure === "sockets" && s.t >= from && s.series.startsWith(prefix),
  );
  if (mine.length === 0) return null;
  const last = Math.max(...mine.map((s) => s.t));
  const highest = new Map<string, { first: number; last: number }>();
  for (const s of mine) {
    const kind = s.series.slice(prefix.length);
    const h = highest.get(kind) ?? { first: 0, last: 0 };
    if (s.t < from + END_SECONDS) h.first = Math.max(h.first, s.value);
    if (s.t > last - END_SECONDS) h.last = Math.max(h.last, s.value);
    highest.set(kind, h);
  }
  const rose = [...highest]
    .filter(([, h]) => h.last > h.first)
    .sort((a, b) => b[1].last - b[1].first - (a[1].last - a[1].first))
    .map(([kind, h]) => `${kind} +${h.last - h.first} (${h.first}→${h.last})`);
  return rose.length === 0 ? null : rose.join(", ");
}
