import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { type KvEntry, KvError, type KvSink, type PutOptions } from "./kv-sink.js";

/** Options of the file sink. */
export interface FileSinkOptions {
  /** `KV_FILE_DIR`: `routes.json` and `meta.json` live here. */
  readonly dir: string;
}

/** The keys the pusher writes; a key names its file, so nothing else may reach a path. */
const KEY = /^[a-z][a-z0-9-]{0,63}$/;

function fileOf(dir: string, key: string): string {
  if (!KEY.test(key))
    throw new KvError("bad-request", `"${key}" is not a key the file sink writes`);
  return join(dir, `${key}.json`);
}

function ioError(what: string, e: unknown): KvError {
  const code = (e as NodeJS.ErrnoException).code ?? "error";
  return new KvError("file-error", `${what}: ${code}`);
}

/** Writes `value` to `path` so a reader sees the whole old file or the whole new one. */
async function replaceFile(dir: string, path: string, value: string): Promise<void> {
  // Same directory as the target: rename(2) is atomic only within one file system.
  const scratch = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const file = await open(scratch, "wx", 0o644);
    try {
      await file.writeFile(value, "utf8");
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(scratch, path);
  } catch (e) {
    await rm(scratch, { force: true }).catch(() => {});
    throw e;
  }
}

/** fsync of the directory: the rename itself survives a power cut. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * KV as files (`KV_SINK=file`, docs/reference.md §5): each key is `<dir>/<key>.json`,
 * replaced by temp file, fsync and rename, for hosts that route without Workers KV. Creates
 * `dir` when missing.
 */
export async function createFileSink(opts: FileSinkOptions): Promise<KvSink> {
  const { dir } = opts;
  try {
    await mkdir(dir, { recursive: true, mode: 0o755 });
  } catch (e) {
    throw ioError(`cannot create KV_FILE_DIR "${dir}"`, e);
  }
  return {
    kind: "file",
    async get(key) {
      try {
        return await readFile(fileOf(dir, key), "utf8");
      } catch (e) {
        if (e instanceof KvError) throw e;
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
        throw ioError(`cannot read ${key}.json`, e);
      }
    },
    async putMany(entries: readonly KvEntry[], options: PutOptions = {}) {
      for (const { key, value } of entries) {
        if (options.signal?.aborted) throw new KvError("timeout", "write window closed");
        try {
          await replaceFile(dir, fileOf(dir, key), value);
        } catch (e) {
          if (e instanceof KvError) throw e;
          throw ioError(`cannot write ${key}.json`, e);
        }
      }
      try {
        await syncDir(dir);
      } catch (e) {
        throw ioError(`cannot sync "${dir}"`, e);
      }
    },
    async close() {},
  };
}
