/**
 * A demo origin for the local stack: `tsx scripts/demo-origin.ts --pool fra-1 --port 9101`.
 * Answers with its pool name, the path and the X-Edge-* headers it received.
 */
import { Command } from "commander";
import { startDemoOrigin } from "./stack/demo-origin-server.js";

const program = new Command("demo-origin")
  .requiredOption("--pool <name>", "pool name to report")
  .requiredOption("--port <n>", "port to listen on (127.0.0.1)", (v) => Number.parseInt(v, 10))
  .option("--quiet", "do not log requests")
  .parse();
const o = program.opts<{ pool: string; port: number; quiet?: boolean }>();

const origin = await startDemoOrigin({
  pool: o.pool,
  port: o.port,
  ...(o.quiet ? {} : { onRequest: (line: string) => console.log(line) }),
});
console.log(`listening on ${origin.url} (pool ${origin.pool})`);

const stop = () => {
  void origin.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
