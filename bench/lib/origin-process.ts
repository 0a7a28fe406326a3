import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
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
  const child = spawn(process.execPath, ["-e", SCRIPT], { stdio: ["ignore", "pipe", "inherit"] });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not start the origin");
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  cleanup.add(`origin ${pid}`, async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited;
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: child.stdout! });
    rl.once("line", (line) => resolve(Number(line)));
    child.once("exit", (code) => reject(new Error(`origin exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, pid };
}
