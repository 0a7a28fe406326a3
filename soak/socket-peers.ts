import { readdir, readFile, readlink } from "node:fs/promises";

/** One TCP socket of the loopback tables (/proc/net/tcp, tcp6). */
interface TcpSocket {
  readonly localPort: number;
  readonly remotePort: number;
  /** The kernel's state code: `01` established, `08` close-wait, `0A` listen… */
  readonly state: string;
}

const LISTEN = "0A";
const CLOSE_WAIT = "08";

/** The sockets of /proc/net/tcp and tcp6, by inode. */
export function parseTcpTable(text: string, into = new Map<number, TcpSocket>()) {
  for (const line of text.split("\n").slice(1)) {
    const f = line.trim().split(/\s+/);
    const local = f[1];
    const remote = f[2];
    const state = f[3];
    const inode = Number(f[9]);
    if (!local || !remote || !state || !Number.isInteger(inode) || inode === 0) continue;
    const port = (addr: string) => Number.parseInt(addr.slice(addr.lastIndexOf(":") + 1), 16);
    into.set(inode, { localPort: port(local), remotePort: port(remote), state });
  }
  return into;
}

async function tcpTable(): Promise<Map<number, TcpSocket>> {
  const table = new Map<number, TcpSocket>();
  for (const file of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    try {
      parseTcpTable(await readFile(file, "utf8"), table);
    } catch {
      // no IPv6 table
    }
  }
  return table;
}

/** The socket inodes and the other descriptors `pid` holds. */
async function descriptors(pid: number): Promise<{ sockets: number[]; others: number }> {
  const sockets: number[] = [];
  let others = 0;
  let names: string[];
  try {
    names = await readdir(`/proc/${pid}/fd`);
  } catch {
    return { sockets, others };
  }
  await Promise.all(
    names.map(async (fd) => {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(await readlink(`/proc/${pid}/fd/${fd}`));
        if (m) sockets.push(Number(m[1]));
        else others++;
      } catch {
        // closed meanwhile
      }
    }),
  );
  return { sockets, others };
}

/**
 * Names what holds the other end of a connection: the kind of process (`pusher`, `heartbeat`,
 * `etcd`…), from its pid and command line.
 */
export type PeerLabel = (pid: number, cmdline: string) => string;

/** A process whose descriptors are counted; a server's connections off `clientPort` are `peer`. */
export interface SocketTarget {
  readonly pid: number;
  /** The port its clients connect to; connections on other ports count as `peer`. */
  readonly clientPort?: number;
}

/**
 * Counts the descriptors of each target by what is at the other end: for a loopback TCP
 * connection, the kind of process holding it (`label`), or `peer` for a server's connections
 * off its client port; else `listen`, `close-wait` (the peer closed, this process has not),
 * `gone` (no process holds the other end) or `other` (files, pipes, event fds). Every process
 * on the machine is searched for the other ends.
 */
export async function socketPeers(
  targets: readonly SocketTarget[],
  label: PeerLabel,
): Promise<Map<number, Map<string, number>>> {
  const table = await tcpTable();
  const byPorts = new Map<string, number>();
  for (const [inode, s] of table) byPorts.set(`${s.localPort}>${s.remotePort}`, inode);
  const owner = new Map<number, string>();
  for (const name of await readdir("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const { sockets } = await descriptors(pid);
    if (sockets.length === 0) continue;
    let cmdline = "";
    try {
      cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ");
    } catch {
      continue;
    }
    const kind = label(pid, cmdline);
    for (const inode of sockets) owner.set(inode, kind);
  }
  const out = new Map<number, Map<string, number>>();
  for (const { pid, clientPort } of targets) {
    const counts = new Map<string, number>();
    const add = (k: string, n = 1) => counts.set(k, (counts.get(k) ?? 0) + n);
    const { sockets, others } = await descriptors(pid);
    if (others > 0) add("other", others);
    for (const inode of sockets) {
      const s = table.get(inode);
      if (!s) add("other");
      else if (s.state === LISTEN) add("listen");
      else if (s.state === CLOSE_WAIT) add("close-wait");
      else if (clientPort !== undefined && s.localPort !== clientPort) add("peer");
      else {
        const peer = byPorts.get(`${s.remotePort}>${s.localPort}`);
        add((peer === undefined ? undefined : owner.get(peer)) ?? "gone");
      }
    }
    out.set(pid, counts);
  }
  return out;
}
