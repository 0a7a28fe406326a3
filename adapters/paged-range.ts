import { setImmediate } from "node:timers/promises";
import {
  type Etcd3,
  GRPCOutOfRangeError,
  GRPCResourceExhastedError,
  type IKeyValue,
  type IResponseHeader,
} from "etcd3";

/** gRPC call options of a range request (a deadline, for instance). */
export type RangeCallOptions = Parameters<Etcd3["kv"]["range"]>[1];

/** How a paged read cuts the prefix into pages (defaults: 1,000 keys or about 2 MiB). */
export interface PagedRangeOptions {
  /** Most keys asked for in one page. */
  readonly pageKeys?: number;
  /**
   * The bytes a page aims at. etcd cannot limit a range by bytes, so each page's key limit is
   * taken from the previous page's bytes per key; a page that still overflows the gRPC receive
   * limit is asked for again with half the keys.
   */
  readonly pageBytes?: number;
  /** Times the read starts again after a compaction (or a new history) between pages. */
  readonly maxRestarts?: number;
  /** Per page call options (edgectl passes its attempt's deadline). */
  readonly callOptions?: () => RangeCallOptions;
  /** Awaited after each page that has a successor (tests write and compact in between). */
  readonly betweenPages?: (page: number, revision: number) => Promise<void>;
}

/** Every key of a prefix, read page by page at one revision. */
export interface PagedRange {
  /** The revision every page was read at (the first page's). */
  readonly revision: number;
  /** The cluster that served the first page. */
  readonly clusterId: string;
  readonly kvs: readonly IKeyValue[];
  /** Range requests that returned data (the pages). */
  readonly pages: number;
  /** Times the read started over because its revision was compacted between pages. */
  readonly restarts: number;
}

/** Why a paged read gave up. */
export type PagedRangeErrorCode = "compacted-repeatedly" | "value-too-large";

/** A paged read that could not complete; etcd's own errors pass through unchanged. */
export class PagedRangeError extends Error {
  constructor(
    readonly code: PagedRangeErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "PagedRangeError";
  }
}

/** Default page: 10,000 keys (etcd 3.4 walks its index from a page's first key to the range end for every page, so small pages cost more than they save). */
export const DEFAULT_PAGE_KEYS = 10_000;
/** Default page target: 2 MiB. */
export const DEFAULT_PAGE_BYTES = 2 * 1024 * 1024;

/** The range end of a prefix, as etcd computes it: drop trailing 0xff bytes, increment the last. */
export function prefixEnd(prefix: Buffer): Buffer {
  let n = prefix.length;
  while (n > 0 && prefix[n - 1] === 0xff) n--;
  if (n === 0) return Buffer.from([0]);
  const end = Buffer.from(prefix.subarray(0, n));
  end[n - 1] = (end[n - 1] ?? 0) + 1;
  return end;
}

/** The first key in `[from, end)`, keys only (for an error that names a value it cannot read). */
async function keyAt(
  client: Etcd3,
  from: Buffer,
  end: Buffer,
  header: IResponseHeader | null,
  opts: PagedRangeOptions,
): Promise<string> {
  const res = await client.kv.range(
    { key: from, range_end: end, limit: 1, keys_only: true, revision: header?.revision ?? 0 },
    opts.callOptions?.(),
  );
  return res.kvs[0]?.key.toString("utf8") ?? from.toString("utf8");
}

function kvBytes(kv: IKeyValue): number {
  return kv.key.length + kv.value.length;
}

/**
 * Takes each page of a read as it arrives, with the revision and cluster every page is read at
 * (the first page's); a read that starts over asks for a new sink.
 */
export type PageSink = (
  kvs: readonly IKeyValue[],
  at: { readonly revision: number; readonly clusterId: string },
) => void;

/** A paged read whose pages went to a sink instead of into one array. */
export type PagedRangeSummary = Omit<PagedRange, "kvs"> & { readonly count: number };

/**
 * Reads every key under `prefix` in pages, each pinned to the revision the first page was served
 * at, so the result is one consistent snapshot however many pages it took and whatever was
 * written between them. When that revision is compacted before the last page (etcd answers
 * `OutOfRange`), the read starts over at the current revision, up to `maxRestarts` times.
 */
export async function readRangePaged(
  client: Etcd3,
  prefix: string,
  opts: PagedRangeOptions = {},
): Promise<PagedRange> {
  let kvs: IKeyValue[] = [];
  const res = await readRangePages(
    client,
    prefix,
    () => {
      kvs = [];
      return (page) => {
        for (const kv of page) kvs.push(kv);
      };
    },
    opts,
  );
  return {
    revision: res.revision,
    clusterId: res.clusterId,
    kvs,
    pages: res.pages,
    restarts: res.restarts,
  };
}

/**
 * {@link readRangePaged}, handing each page to a sink as it arrives (each attempt gets a fresh
 * one from `start`), so a large prefix is never held whole as etcd's messages.
 */
export async function readRangePages(
  client: Etcd3,
  prefix: string,
  start: () => PageSink,
  opts: PagedRangeOptions = {},
): Promise<PagedRangeSummary> {
  const maxRestarts = opts.maxRestarts ?? 3;
  for (let restarts = 0; ; restarts++) {
    try {
      return { ...(await readOnce(client, prefix, start(), opts)), restarts };
    } catch (e) {
      if (!(e instanceof GRPCOutOfRangeError)) throw e;
      if (restarts >= maxRestarts) {
        throw new PagedRangeError(
          "compacted-repeatedly",
          `reading ${prefix}: its revision was compacted between pages ${restarts + 1} times`,
          { cause: e },
        );
      }
    }
  }
}

async function readOnce(
  client: Etcd3,
  prefix: string,
  sink: PageSink,
  opts: PagedRangeOptions,
): Promise<Omit<PagedRangeSummary, "restarts">> {
  const maxKeys = Math.max(1, opts.pageKeys ?? DEFAULT_PAGE_KEYS);
  const targetBytes = Math.max(1, opts.pageBytes ?? DEFAULT_PAGE_BYTES);
  const end = prefixEnd(Buffer.from(prefix));
  let from = Buffer.from(prefix);
  let limit = maxKeys;
  let header: IResponseHeader | null = null;
  let pages = 0;
  let count = 0;
  const ask = () => {
    const sent = client.kv.range(
      {
        key: from,
        range_end: end,
        limit,
        // 0 (the first page): the newest revision, which pins every later page.
        revision: header ? header.revision : 0,
      },
      opts.callOptions?.(),
    );
    // Awaited on the next turn of the loop; a sink that throws first must not leave it unhandled.
    sent.catch(() => {});
    return sent;
  };
  let pending = ask();
  for (;;) {
    let res: Awaited<ReturnType<Etcd3["kv"]["range"]>>;
    try {
      res = await pending;
    } catch (e) {
      if (!(e instanceof GRPCResourceExhastedError)) throw e;
      if (limit === 1) {
        const key = await keyAt(client, from, end, header, opts);
        throw new PagedRangeError(
          "value-too-large",
          `reading ${prefix}: the value of ${JSON.stringify(key)} is larger than the gRPC receive limit`,
          { cause: e },
        );
      }
      limit = Math.max(1, Math.floor(limit / 2));
      pending = ask();
      continue;
    }
    header ??= res.header;
    pages += 1;
    const last = res.kvs[res.kvs.length - 1];
    const more = res.more && last !== undefined;
    if (more) {
      await opts.betweenPages?.(pages, Number(header.revision));
      let bytes = 0;
      for (const kv of res.kvs) bytes += kvBytes(kv);
      from = Buffer.concat([last.key, Buffer.from([0])]);
      const perKey = bytes / res.kvs.length;
      limit = Math.min(maxKeys, Math.max(1, Math.floor(targetBytes / perKey)));
      // The next page is asked for before this one is decoded, so etcd serves it meanwhile.
      // etcd3 sends a request only from promise callbacks (its retry policy, the connection
      // pool), which a synchronous sink would hold back until it returns: one turn of the event
      // loop lets the request out first.
      pending = ask();
      await setImmediate();
    }
    sink(res.kvs, { revision: Number(header.revision), clusterId: String(header.cluster_id) });
    count += res.kvs.length;
    if (!more) break;
  }
  return {
    revision: Number(header?.revision ?? 0),
    clusterId: String(header?.cluster_id ?? ""),
    count,
    pages,
  };
}
