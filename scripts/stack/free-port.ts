import { createServer, type Server } from "node:net";

function listenAnywhere(): Promise<{ srv: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      resolve({ srv, port: typeof addr === "object" && addr ? addr.port : 0 });
    });
  });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port ?? 0;
}

/**
 * `n` distinct TCP ports on 127.0.0.1 that were free a moment ago. Every probe stays bound until
 * all are chosen, so the kernel cannot hand the same port out twice.
 */
export async function freePorts(n: number): Promise<number[]> {
  const held: { srv: Server; port: number }[] = [];
  try {
    for (let i = 0; i < n; i++) held.push(await listenAnywhere());
    return held.map((h) => h.port);
  } finally {
    await Promise.all(held.map((h) => new Promise((r) => h.srv.close(r))));
  }
}
