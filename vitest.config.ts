import { defineConfig } from "vitest/config";
import { applyEtcdChoice, chooseEtcd, etcdVersionOf } from "./testkit/etcd-choice.js";

// The etcd every test starts: ETCD_BIN, else the newest version of the matrix (.tools/), else PATH's.
const etcd = chooseEtcd(process.env.ETCD_BIN);
applyEtcdChoice(process.env, etcd);
process.stderr.write(
  `etcd ${etcdVersionOf(etcd.bin) ?? "(not found)"}: ${etcd.bin} (${etcd.source})\n`,
);

/**
 * The file that runs alone, after the others: two real players decoding video in Chromium beside
 * workerd take both cores for a minute and a half, and its waits are counted in segments.
 */
const ALONE = ["test/e2e/steering-players.test.ts"];

export default defineConfig({
  test: {
    // The tests run the real bins, which run dist/: build it first.
    globalSetup: ["test/helpers/build-dist.ts"],
    pool: "forks",
    // One process per worker runs its files: each file importing etcd3, hono and the rest afresh
    // cost ~2.5 minutes of a 15-minute run. Files share no state but modules' own caches: each
    // starts its own etcd, servers and clients on free ports, and nothing mocks modules or stubs
    // globals.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ["default"],
    // Two files at a time: most of the long ones wait out real TTLs, elections and stale windows
    // rather than compute. `--maxWorkers` overrides it on a larger machine.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: {
          name: "shared",
          include: ["test/**/*.test.ts"],
          exclude: ["node_modules/**", "test/faults/**", ...ALONE],
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "alone",
          include: ALONE,
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
