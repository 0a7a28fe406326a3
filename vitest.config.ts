import { defineConfig } from "vitest/config";
import { applyEtcdChoice, chooseEtcd, etcdVersionOf } from "./testkit/etcd-choice.js";

// The etcd every test starts: ETCD_BIN, else the newest version of the matrix (.tools/), else PATH's.
const etcd = chooseEtcd(process.env.ETCD_BIN);
applyEtcdChoice(process.env, etcd);
process.stderr.write(
  `etcd ${etcdVersionOf(etcd.bin) ?? "(not found)"}: ${etcd.bin} (${etcd.source})\n`,
);

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["node_modules/**", "test/faults/**"],
    // The tests run the real bins, which run dist/: build it first.
    globalSetup: ["test/helpers/build-dist.ts"],
    pool: "forks",
    // Files run one at a time: each starts etcd, workerd or whole stacks, and their timing margins
    // assume a quiet machine. A container may report more CPUs than its quota; `--maxWorkers`
    // overrides this on a machine known to be larger.
    maxWorkers: 1,
    minWorkers: 1,
    // One process runs every file: each file importing etcd3, hono and the rest afresh cost
    // ~2.5 minutes of a 15-minute run. Files share no state but modules' own caches: each starts
    // its own etcd, servers and clients, and nothing mocks modules or stubs globals.
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    teardownTimeout: 30_000,
    reporters: ["default"],
  },
});
