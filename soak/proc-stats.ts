import { readdir, readFile } from "node:fs/promises";

/** What Linux's /proc says about one process. */
export interface ProcStats {
  /** VmRSS: every resident page, the mapped binary and libraries included. */
  readonly rssMiB: number;
  /**
   * RssAnon: resident anonymous memory (heaps, stacks, buffers), what a leak grows. RSS also
   * counts file pages (RssFile: the node binary's code alone is about 55 MiB), which grow as
   * more code paths run once and are not a leak.
   */
  readonly anonMiB: number;
  readonly fds: number;
}

/** RSS, anonymous RSS and open descriptors of `pid`, or null once it has gone. */
export async function procStats(pid: number): Promise<ProcStats | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, "utf8");
    const kib = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status)?.[1] ?? Number.NaN);
    const fds = (await readdir(`/proc/${pid}/fd`)).length;
    return { rssMiB: kib("VmRSS") / 1024, anonMiB: kib("RssAnon") / 1024, fds };
  } catch {
    return null;
  }
}

interface ProcEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly cmdline: string;
}

async function processTable(): Promise<ProcEntry[]> {
  const out: ProcEntry[] = [];
  for (const name of await readdir("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const stat = await readFile(`/proc/${pid}/stat`, "utf8");
      // The command name is in parentheses and may hold spaces: ppid is the 2nd field after it.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmdline = (await readFile(`/proc/${pid}/cmdline`, "utf8")).replaceAll("\0", " ");
      out.push({ pid, ppid, cmdline });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** Descendants of `root` (its children, theirs…) whose command line matches `pattern`. */
export async function findDescendants(root: number, pattern: RegExp): Promise<number[]> {
  const table = await processTable();
  const children = new Map<number, number[]>();
  for (const p of table) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const mine = new Set<number>();
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    for (const c of children.get(pid) ?? []) {
      if (!mine.has(c)) {
        mine.add(c);
        queue.push(c);
      }
    }
  }
  return table.filter((p) => mine.has(p.pid) && pattern.test(p.cmdline)).map((p) => p.pid);
}
