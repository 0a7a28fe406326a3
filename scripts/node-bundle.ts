/**
 * How the Node bundles are made (`scripts/build.ts`, and the bench's floors that must start as
 * the bins do): every npm package is bundled in, except {@link EXTERNAL_PACKAGES}. A package
 * resolved from node_modules at run time costs each start its lookups and one module per file:
 * bundled, the pusher reaches "pusher started" ~140 ms sooner and an `edgectl` command that talks
 * to etcd answers ~65 ms sooner (bench/README.md "cli"), and a production install holds no
 * node_modules at all.
 */
import { readFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { join } from "node:path";
import type { Plugin } from "esbuild";

/** The Node versions `engines` allows start at 22.12. */
export const NODE_TARGET = "node22.12";

/**
 * Packages loaded from the host at run time: miniflare (with its workerd binary) only when
 * `KV_SINK=local` is chosen; the local sink says what to install when it is missing.
 */
export const EXTERNAL_PACKAGES: readonly string[] = ["miniflare"];

/**
 * Builtins a bundled CommonJS package `require`s but seldom uses, loaded on first use instead:
 * commander needs `node:child_process` only for subcommands that are separate executables,
 * which edgectl has none of, and loading it (with `net` and streams) costs each start ~5 ms.
 */
const LAZY_BUILTINS = new Set(["node:child_process"]);

/** The module a bundled package's `require("node:…")` gets (an ES module bundle has no `require`). */
function builtinShim(name: string): string {
  const load = `process.getBuiltinModule(${JSON.stringify(name)})`;
  return LAZY_BUILTINS.has(name)
    ? `let m; module.exports = new Proxy({}, { get: (_, key) => (m ??= ${load})[key] });`
    : `module.exports = ${load};`;
}

/** The call in etcd3's connection pool that parses its `.proto` files from disk at load time. */
const ETCD3_PROTO_LOAD =
  /\(0, proto_loader_1\.loadSync\)\(`\$\{__dirname\}\/\.\.\/proto\/rpc\.proto`,/;

/**
 * etcd3's `rpc.proto` (with the files it imports) as protobufjs JSON, parsed as etcd3 parses it
 * (`keepCase`). From it `@grpc/proto-loader`'s `fromJSON` gives the package definition that
 * `loadSync` of the files gives (test/scripts/node-bundle.test.ts), without the files or the
 * parse at run time.
 */
export function etcd3RpcJson(root: string): string {
  const require = createRequire(join(root, "package.json"));
  const protobuf = require("protobufjs") as typeof import("protobufjs");
  const rpc = new protobuf.Root();
  rpc.loadSync(require.resolve("etcd3/proto/rpc.proto"), { keepCase: true });
  return JSON.stringify(rpc.toJSON());
}

/**
 * etcd3's `lib/connection-pool.js` with its `.proto` parse replaced by `fromJSON` of `rpcJson`;
 * throws when the call is not there (an etcd3 that loads its definitions another way).
 */
export function etcd3PoolSource(source: string, rpcJson: string): string {
  if (!ETCD3_PROTO_LOAD.test(source)) {
    throw new Error(
      "etcd3's connection-pool.js no longer loads rpc.proto as scripts/node-bundle.ts expects",
    );
  }
  return source.replace(ETCD3_PROTO_LOAD, () => `(0, proto_loader_1.fromJSON)(${rpcJson},`);
}

/**
 * The esbuild plugin of the Node bundles: npm packages bundled in (but {@link EXTERNAL_PACKAGES}),
 * a bundled CommonJS package's `require` of a builtin served by `process.getBuiltinModule`, and
 * etcd3's service definitions compiled in (`root`: the checkout, whose node_modules is read).
 */
export function nodeBundlePlugin(root: string): Plugin {
  const builtins = new Set(builtinModules);
  const external = new RegExp(`^(${EXTERNAL_PACKAGES.join("|")})(/|$)`);
  let rpcJson: string | null = null;
  return {
    name: "node-bundle",
    setup(b) {
      b.onResolve({ filter: /^[a-z_:]/ }, (args) => {
        if (args.kind !== "require-call") return undefined;
        const name = args.path.replace(/^node:/, "");
        return builtins.has(name) ? { path: `node:${name}`, namespace: "builtin" } : undefined;
      });
      b.onLoad({ filter: /.*/, namespace: "builtin" }, (args) => ({
        contents: builtinShim(args.path),
        loader: "js",
      }));
      b.onResolve({ filter: /^[^./]/ }, (args) =>
        args.path.startsWith("node:") || external.test(args.path)
          ? { path: args.path, external: true }
          : undefined,
      );
      b.onLoad({ filter: /[\\/]etcd3[\\/]lib[\\/]connection-pool\.js$/ }, (args) => {
        rpcJson ??= etcd3RpcJson(root);
        return {
          contents: etcd3PoolSource(readFileSync(args.path, "utf8"), rpcJson),
          loader: "js",
        };
      });
    },
  };
}
