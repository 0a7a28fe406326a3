import { createInterface } from "node:readline";
import { spawnOwned } from "../../testkit/owned-process.js";
import type { Cleanup } from "./cleanup.js";

// A minimal origin: a fixed small answer, nothing recorded (it serves hundreds of thousands).
const SCRIPT = `
const http = require("node:http");
const body = Buffer.from("ok from origin\\n");
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "text/plain", "content-length": body.length });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

/** A loopback HTTP origin in its own process (so it does not share the load generator's loop). */
export async function startOriginProcess(cleanup: Cleanup): Promise<{ url: string; pid: number }> {
  const origin = spawnOwned("origin", process.execPath, ["-e", SCRIPT], {
    cwd: process.cwd(),
    env: process.env,
    outputLimit: 16 * 1024,
  });
  const { pid, child } = origin;
  if (pid <= 0) throw new Error(`could not start the origin: ${origin.output()}`);
  cleanup.add(`origin ${pid}`, () => origin.kill9());
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (line) => resolve(Number(line)));
    void origin.exited.then(({ code }) =>
      reject(new Error(`origin exited with ${code}: ${origin.output()}`)),
    );
  });
  return { url: `http://127.0.0.1:${port}`, pid };
}
