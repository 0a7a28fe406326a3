import { resolve } from "node:path";
import type { StackConfig } from "./config.js";
import type { StackReady } from "./local-stack.js";

/** The "ready" banner and the commands to try, with the stack's actual ports and token. */
export function guideLines(cfg: StackConfig, ready: StackReady): string[] {
  const edge = `http://127.0.0.1:${cfg.workerPort}`;
  const etcdEnv = cfg.etcdPort === 2379 ? "" : `ETCD_ENDPOINTS=${ready.etcdEndpoint} `;
  const defaultPersist = resolve(cfg.root, ".wrangler/state");
  const kvEnv = cfg.persistDir === defaultPersist ? "" : `KV_LOCAL_PERSIST=${cfg.persistDir} `;
  const pusherFlag = cfg.pusherPort === 9464 ? "" : ` --pusher http://127.0.0.1:${cfg.pusherPort}`;
  const first = ready.pools[0];
  const second = ready.pools[1]?.pool ?? "ams-1";
  const curl = `curl -si -H 'X-Edge-Debug-Token: ${cfg.debugToken}' -H 'X-Edge-Debug-Country: DE' ${edge}/`;
  const lines = [
    `ready in ${(ready.elapsedMs / 1000).toFixed(1)} s: edge ${edge} serving revision ${ready.revision}`,
    `  debug token (this run only): ${cfg.debugToken}`,
    `  routing map (live):          http://127.0.0.1:${cfg.pusherPort}/ui`,
    `  what viewers get:            http://127.0.0.1:${cfg.observerPort}/metrics (and /status)`,
    "",
    "  Try:",
    `    ${curl}`,
    `    ${etcdEnv}./bin/edgectl.js boost DE --pool ${second} --ttl 30s   # then curl again: X-Edge-Pool: ${second}`,
    `    ${etcdEnv}./bin/edgectl.js explain DE`,
    `    ${etcdEnv}${kvEnv}./bin/edgectl.js status${pusherFlag}`,
  ];
  if (first) {
    lines.push(
      `    curl -X POST ${first.origin}/__demo/health/down   # ${first.pool} fails its health check; /up restores it`,
    );
  }
  lines.push(
    `    curl -s http://127.0.0.1:${cfg.pusherPort}/status`,
    "",
    "  Ctrl-C stops everything the stack started.",
  );
  return lines;
}
