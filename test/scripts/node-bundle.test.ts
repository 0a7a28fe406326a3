import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { EXTERNAL_PACKAGES, etcd3PoolSource, etcd3RpcJson } from "../../scripts/node-bundle.js";

const ROOT = resolve(import.meta.dirname, "../..");
// etcd3's own proto-loader, as its connection pool resolves it.
const fromEtcd3 = createRequire(createRequire(join(ROOT, "package.json")).resolve("etcd3"));
const protoLoader = fromEtcd3("@grpc/proto-loader") as typeof import("@grpc/proto-loader");
const RPC_PROTO = fromEtcd3.resolve("../proto/rpc.proto");
const POOL = fromEtcd3.resolve("./connection-pool.js");
/** etcd3's options (lib/connection-pool.js). */
const OPTIONS = { keepCase: true, longs: String, enums: String, defaults: true, oneofs: true };

type Definition = ReturnType<typeof protoLoader.loadSync>;
type Entry = Definition[string];

/** What a package definition means to a client: each method's path and streaming, each message's descriptor. */
function meaning(def: Definition): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, entry] of Object.entries(def) as [string, Entry][]) {
    if ("format" in entry) {
      const files = entry.fileDescriptorProtos as Buffer[];
      out[name] = {
        type: JSON.stringify(entry.type),
        files: files.map((b) => Buffer.from(b).toString("base64")),
      };
    } else {
      out[name] = Object.fromEntries(
        Object.entries(entry).map(([method, m]) => [
          method,
          { path: m.path, requestStream: m.requestStream, responseStream: m.responseStream },
        ]),
      );
    }
  }
  return out;
}

describe("etcd3's service definitions compiled into the bundle", () => {
  it("give the package definition etcd3's own parse of rpc.proto gives", () => {
    const parsed = protoLoader.loadSync(RPC_PROTO, OPTIONS);
    const compiled = protoLoader.fromJSON(JSON.parse(etcd3RpcJson(ROOT)), OPTIONS);
    expect(Object.keys(compiled).sort()).toEqual(Object.keys(parsed).sort());
    expect(Object.keys(parsed)).toContain("etcdserverpb.KV");
    expect(meaning(compiled)).toEqual(meaning(parsed));
  });

  it("encode and decode a range request and response the same way", () => {
    const parsed = protoLoader.loadSync(RPC_PROTO, OPTIONS);
    const compiled = protoLoader.fromJSON(JSON.parse(etcd3RpcJson(ROOT)), OPTIONS);
    type Method = {
      requestSerialize(x: unknown): Buffer;
      responseSerialize(x: unknown): Buffer;
      responseDeserialize(b: Buffer): unknown;
    };
    const range = (d: Definition) =>
      (d["etcdserverpb.KV"] as unknown as Record<string, Method>).Range;
    const request = { key: Buffer.from("/edge/"), range_end: Buffer.from("/edge0"), limit: 7 };
    const bytes = range(parsed)?.requestSerialize(request);
    expect(bytes).toBeDefined();
    expect(range(compiled)?.requestSerialize(request)).toEqual(bytes);
    const kv = {
      key: Buffer.from("/edge/x"),
      value: Buffer.from("{}"),
      mod_revision: "9007199254740993",
    };
    const answer = range(parsed)?.responseSerialize({
      header: { revision: "12" },
      kvs: [kv],
      count: "1",
    });
    expect(
      range(compiled)?.responseSerialize({ header: { revision: "12" }, kvs: [kv], count: "1" }),
    ).toEqual(answer);
    const decoded = range(parsed)?.responseDeserialize(answer as Buffer);
    expect(decoded).toMatchObject({ count: "1", kvs: [{ mod_revision: "9007199254740993" }] });
    expect(range(compiled)?.responseDeserialize(answer as Buffer)).toEqual(decoded);
  });

  it("replace the parse in etcd3's connection pool, and refuse a pool that no longer has it", () => {
    const source = readFileSync(POOL, "utf8");
    const rewritten = etcd3PoolSource(source, '{"nested":{}}');
    expect(rewritten).toContain('(0, proto_loader_1.fromJSON)({"nested":{}},');
    expect(rewritten).not.toContain("rpc.proto");
    expect(() => etcd3PoolSource("const x = 1;", "{}")).toThrow(/no longer loads rpc\.proto/);
  });
});

describe("the built bundles", () => {
  it("import no npm package at run time but the external ones", () => {
    const dist = join(ROOT, "dist");
    const files = [
      ...readdirSync(dist).filter((f) => f.endsWith(".js")),
      ...readdirSync(join(dist, "chunks"))
        .filter((f) => f.endsWith(".js"))
        .map((f) => `chunks/${f}`),
    ];
    const bare = new Set<string>();
    for (const file of files) {
      const text = readFileSync(join(dist, file), "utf8");
      for (const m of text.matchAll(
        /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s*"([^".][^"]*)"|\bimport\("([^".][^"]*)"\)/g,
      )) {
        const spec = m[1] ?? m[2] ?? "";
        if (!spec.startsWith("node:")) bare.add(spec);
      }
    }
    expect([...bare].sort()).toEqual([...EXTERNAL_PACKAGES].sort());
  });
});
