import { setTimeout as sleep } from "node:timers/promises";
import { type OwnedProcess, spawnOwned } from "../../testkit/owned-process.js";
import { freePort } from "../../testkit/ports.js";

/** `php -S` on a loopback port, serving one router script. */
export interface PhpServer {
  /** `http://127.0.0.1:PORT`, usable as a pool origin. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts PHP's built-in server (`php -S 127.0.0.1:PORT router`) with `env` beside `PATH`, and
 * waits until it answers. Fails naming its output when it does not within 5 s.
 */
export async function startPhpServer(
  router: string,
  env: Readonly<Record<string, string>> = {},
): Promise<PhpServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const proc: OwnedProcess = spawnOwned("php", "php", ["-S", `127.0.0.1:${port}`, router], {
    env: { PATH: process.env.PATH ?? "", ...env },
    cwd: process.cwd(),
    outputLimit: 4000,
  });
  for (let i = 0; i < 100 && proc.alive(); i++) {
    try {
      await (await fetch(`${url}/`)).arrayBuffer();
      return { url, stop: () => proc.stop(1000) };
    } catch {
      await sleep(50);
    }
  }
  await proc.stop(0);
  throw new Error(`php -S ${router} did not answer on ${url}: ${proc.output()}`);
}
