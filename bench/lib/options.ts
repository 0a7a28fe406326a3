/** Command-line options of `npm run bench`. */
export interface BenchOptions {
  /** `--quick`: fewer samples and shorter loads; under 5 minutes. */
  readonly quick: boolean;
  /** `--only a,b`: run only these sections (scale, growth, economy, worker, observe,steer, bundle, weighted, cache, propagation, burst, failover, stall, health, canary, ui, cli). */
  readonly only: readonly string[] | null;
  /** `--etcd PATH`: the etcd binary every section runs on (its folder's etcdctl with it); else `ETCD_BIN`. */
  readonly etcd: string | null;
}

/** Parses `--quick` and `--only LIST`. */
export function parseArgs(argv: readonly string[]): BenchOptions {
  let quick = false;
  let only: string[] | null = null;
  let etcd: string | null = null;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--quick") quick = true;
    else if (a === "--only") only = (argv[++i] ?? "").split(",").filter(Boolean);
    else if (a?.startsWith("--only=")) only = a.slice(7).split(",").filter(Boolean);
    else if (a === "--etcd") etcd = argv[++i] ?? "";
    else if (a?.startsWith("--etcd=")) etcd = a.slice(7);
    else if (a === "--help" || a === "-h") {
      process.stdout.write(
        "usage: npm run bench -- [--quick] [--only scale,growth,economy,worker,observe,steer,bundle,weighted,cache,propagation,burst,failover,stall,health,canary,ui,cli] [--etcd PATH]\n",
      );
      process.exit(0);
    } else {
      process.stderr.write(`bench: unknown argument ${a}\n`);
      process.exit(2);
    }
  }
  return { quick, only, etcd };
}
