import { createInterface } from "node:readline";
import { spawnOwned } from "../../testkit/owned-process.js";
import type { Cleanup } from "./cleanup.js";

/** Bytes of every segment the origin serves (a few frames of a small rendition). */
export const SEGMENT_BYTES = 64 * 1024;

/** The path that answers the origin's request count (not counted itself). */
export const COUNT_PATH = "/__count";

// Segments from memory, the same bytes at every origin, cacheable for an hour; counted.
const SCRIPT = `
const http = require("node:http");
const body = Buffer.alloc(${SEGMENT_BYTES}, 0x47);
let count = 0;
const server = http.createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    if (req.url === "${COUNT_PATH}") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.end(String(count));
      return;
    }
    count += 1;
    res.writeHead(200, {
      "content-type": "video/mp2t",
      "content-length": body.length,
      "cache-control": "public, max-age=3600",
    });
    res.end(body);
  });
});
server.keepAliveTimeout = 60000;
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
`;

/** A loopback video origin in its own process that counts the segment requests it answers. */
export interface SegmentOrigin {
  readonly url: string;
  /** Segment requests answered so far. */
  count(): Promise<number>;
  /** `kill -9`: the port refuses from now on. */
  kill(): void;
}

/** Starts a {@link SegmentOrigin}. */
export async function startSegmentOrigin(cleanup: Cleanup, name: string): Promise<SegmentOrigin> {
  const origin = spawnOwned(name, process.execPath, ["-e", SCRIPT], {
    cwd: process.cwd(),
    env: process.env,
    outputLimit: 16 * 1024,
  });
  if (origin.pid <= 0) throw new Error(`could not start ${name}: ${origin.output()}`);
  cleanup.add(`${name} ${origin.pid}`, () => origin.kill9());
  const port = await new Promise<number>((resolve, reject) => {
    const rl = createInterface({ input: origin.child.stdout! });
    rl.once("line", (line) => resolve(Number(line)));
    void origin.exited.then(({ code }) =>
      reject(new Error(`${name} exited with ${code}: ${origin.output()}`)),
    );
  });
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    async count() {
      const res = await fetch(`${url}${COUNT_PATH}`);
      return Number(await res.text());
    },
    kill: () => {
      void origin.kill9();
    },
  };
}
