import { Agent, type IncomingHttpHeaders, request } from "node:http";

/** Kept-alive connections, as a CDN keeps them to a Worker: no TCP handshake per sample. */
const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** A GET with an explicit Host header over kept-alive connections, timed to the body's end. */
export function timedGet(
  url: string,
  host: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ status: number; headers: IncomingHttpHeaders; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = request(url, { method: "GET", headers: { ...headers, host }, agent }, (res) => {
      res.resume();
      res.on("end", () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          ms: performance.now() - started,
        }),
      );
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}
