import type { TcpProxy } from "./tcp-proxy.js";

/** The sender an etcd peer request names in its `X-Server-From` header (hex member id). */
export function serverFrom(head: string): string | undefined {
  for (const line of head.split("\r\n")) {
    const m = /^x-server-from:\s*([0-9a-f]+)\s*$/i.exec(line);
    if (m) return m[1]?.toLowerCase();
  }
  return undefined;
}

/** Cuts members off from their peers through the proxies in front of their peer ports. */
export interface PeerPartitions {
  /** Member i's proxy refuses and closes everything; the others refuse i's own requests. */
  partition(i: number): void;
  heal(i: number): void;
  healAll(): void;
  readonly cut: ReadonlySet<number>;
}

/**
 * Partitions by proxy: cutting only a member's inbound proxy is not enough, because it also dials
 * its peers and receives the leader's messages over those connections, so the other proxies
 * refuse (and close) connections whose first request names it in `X-Server-From`.
 * `memberIds` is read at each change, so ids replaced by a restore are honoured.
 */
export function peerPartitions(
  proxies: readonly TcpProxy[],
  memberIds: readonly string[],
): PeerPartitions {
  const cut = new Set<number>();
  const apply = () => {
    const cutIds = new Set([...cut].map((i) => memberIds[i]));
    proxies.forEach((p, j) => {
      if (cut.has(j)) p.disconnect();
      else {
        p.accept();
        if (cutIds.size === 0) p.unblock();
        else p.block((head) => cutIds.has(serverFrom(head)));
      }
    });
  };
  return {
    cut,
    partition(i) {
      if (!proxies[i]) throw new Error(`no etcd member ${i} to partition`);
      cut.add(i);
      apply();
    },
    heal(i) {
      cut.delete(i);
      apply();
    },
    healAll() {
      cut.clear();
      apply();
    },
  };
}
