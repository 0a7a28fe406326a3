import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, request, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";

/** RFC 6455 §1.3: the GUID the server appends to `Sec-WebSocket-Key`. */
const WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/** One unmasked server frame (FIN set) of `opcode` carrying `payload`. */
function frame(opcode: number, payload: Buffer): Buffer {
  const len = payload.length;
  const head =
    len < 126
      ? Buffer.from([0x80 | opcode, len])
      : Buffer.from([0x80 | opcode, 126, len >> 8, len & 255]);
  return Buffer.concat([head, payload]);
}

/** The complete client frames at the start of `buf` (masked, as RFC 6455 requires) and the rest. */
function readFrames(buf: Buffer): { frames: { opcode: number; payload: Buffer }[]; rest: Buffer } {
  const frames: { opcode: number; payload: Buffer }[] = [];
  let at = 0;
  for (;;) {
    if (buf.length - at < 2) break;
    const b0 = buf[at] ?? 0;
    const b1 = buf[at + 1] ?? 0;
    let len = b1 & 127;
    let off = at + 2;
    if (len === 126) {
      if (buf.length - off < 2) break;
      len = buf.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      if (buf.length - off < 8) break;
      len = Number(buf.readBigUInt64BE(off));
      off += 8;
    }
    const masked = (b1 & 128) !== 0;
    const maskLen = masked ? 4 : 0;
    if (buf.length - off < maskLen + len) break;
    const mask = buf.subarray(off, off + maskLen);
    const payload = Buffer.from(buf.subarray(off + maskLen, off + maskLen + len));
    if (masked)
      for (let i = 0; i < payload.length; i++) payload[i] = (payload[i] ?? 0) ^ (mask[i % 4] ?? 0);
    frames.push({ opcode: b0 & 15, payload });
    at = off + maskLen + len;
  }
  return { frames, rest: buf.subarray(at) };
}

/** What the echo origin saw of the upgrade request. */
interface Handshake {
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
}

/**
 * A real WebSocket origin on loopback, written against RFC 6455 with `node:http`'s `upgrade`
 * event: it completes the handshake and echoes every text frame as `echo:<text>`; it refuses
 * an upgrade to `/refuse…` with a 403.
 */
async function startEchoOrigin(): Promise<{
  url: string;
  handshakes: Handshake[];
  close(): Promise<void>;
}> {
  const handshakes: Handshake[] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((_req, res) => {
    res.writeHead(426, { "content-type": "text/plain" });
    res.end("upgrade required");
  });
  server.on("upgrade", (req: IncomingMessage, socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => undefined);
    handshakes.push({ url: req.url ?? "", headers: req.headers });
    if (req.url?.startsWith("/refuse")) {
      socket.end("HTTP/1.1 403 Forbidden\r\nContent-Length: 7\r\nConnection: close\r\n\r\nno room");
      return;
    }
    const key = req.headers["sec-websocket-key"];
    if (typeof key !== "string" || req.headers.upgrade?.toLowerCase() !== "websocket") {
      socket.end("HTTP/1.1 400 Bad Request\r\n\r\n");
      return;
    }
    const accept = createHash("sha1")
      .update(key + WS_GUID)
      .digest("base64");
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\nX-Origin-Name: ws-1\r\n\r\n`,
    );
    let pending: Buffer = Buffer.alloc(0);
    socket.on("data", (chunk: Buffer) => {
      const { frames, rest } = readFrames(Buffer.concat([pending, chunk]));
      pending = rest;
      for (const f of frames) {
        if (f.opcode === 1) socket.write(frame(1, Buffer.from(`echo:${f.payload.toString()}`)));
        else if (f.opcode === 9) socket.write(frame(10, f.payload));
        else if (f.opcode === 8) socket.end(frame(8, f.payload));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    handshakes,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** Opens a WebSocket and resolves once it is open, or rejects on error or close. */
function open(url: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.addEventListener("open", () => resolve(ws), { once: true });
    ws.addEventListener("error", () => reject(new Error(`WebSocket to ${url} failed`)), {
      once: true,
    });
  });
}

/** The next text message on `ws`. */
function nextMessage(ws: WebSocket): Promise<string> {
  return new Promise((resolve, reject) => {
    ws.addEventListener("message", (e) => resolve(String(e.data)), { once: true });
    ws.addEventListener("close", () => reject(new Error("closed before a message")), {
      once: true,
    });
  });
}

describe("a WebSocket upgrade through the Worker", () => {
  let origin: Awaited<ReturnType<typeof startEchoOrigin>>;
  let worker: TestWorker;
  let edge: URL;

  beforeAll(async () => {
    origin = await startEchoOrigin();
    worker = await startWorker();
    const spec = { default: { chain: ["ws-1"], source: "country/_default" } };
    await worker.putMap(serializeMap(buildMap(spec, { rev: 12, originOf: () => origin.url })));
    edge = await worker.mf.ready;
  });
  afterAll(async () => {
    await worker?.dispose();
    await origin?.close();
  });

  it("reaches the origin, which echoes messages both ways", async () => {
    const ws = await open(`ws://${edge.host}/live/chat?room=7`);
    try {
      ws.send("hello");
      expect(await nextMessage(ws)).toBe("echo:hello");
      ws.send("x".repeat(300));
      expect(await nextMessage(ws)).toBe(`echo:${"x".repeat(300)}`);
    } finally {
      ws.close();
    }
    const hs = origin.handshakes.at(-1);
    expect(hs?.url).toBe("/live/chat?room=7");
    expect(hs?.headers.upgrade?.toLowerCase()).toBe("websocket");
    expect(hs?.headers["x-edge-pool"]).toBe("ws-1");
    expect(hs?.headers["x-edge-hop"]).toBe("1");
  });

  it("answers the handshake 101 with the origin's accept key and the edge's headers", async () => {
    const key = Buffer.from("edge-router-ws-1").toString("base64");
    const res = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = request({
        host: edge.hostname,
        port: edge.port,
        path: "/live",
        headers: {
          Connection: "Upgrade",
          Upgrade: "websocket",
          "Sec-WebSocket-Version": "13",
          "Sec-WebSocket-Key": key,
        },
      });
      req.on("upgrade", (r: IncomingMessage, socket: Socket) => {
        socket.destroy();
        resolve(r);
      });
      req.on("response", (r) => reject(new Error(`no upgrade: ${r.statusCode}`)));
      req.on("error", reject);
      req.end();
    });
    expect(res.statusCode).toBe(101);
    expect(res.headers["sec-websocket-accept"]).toBe(
      createHash("sha1")
        .update(key + WS_GUID)
        .digest("base64"),
    );
    expect(res.headers["x-edge-pool"]).toBe("ws-1");
    expect(res.headers["x-edge-revision"]).toBe("12");
    expect(res.headers["x-edge-source"]).toBe("country/_default");
  });

  it("passes an origin's refusal of the upgrade on as it is", async () => {
    const res = await worker.dispatch("/refuse", { headers: { Upgrade: "websocket" } });
    expect(res.status).toBe(403);
    expect(res.body).toBe("no room");
    expect(res.headers.get("x-edge-pool")).toBe("ws-1");
  });
});
