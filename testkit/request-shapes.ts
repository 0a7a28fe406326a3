import { request } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * A request as a client can put it on the wire, including shapes `fetch` refuses to send (a GET
 * with a body, a client that gives up mid-upload).
 */
export interface RequestShape {
  readonly name: string;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Bytes sent as the body (`""` still ends a chunked body). */
  readonly body?: string;
  /**
   * Send `body` as the start of an upload that declares more, wait, then drop the connection:
   * a client that gives up mid-upload.
   */
  readonly dropMidUpload?: boolean;
}

/** What came back for a shape; `null` for a shape whose client dropped the connection. */
export interface ShapeAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: string;
}

/** How long a dropping client waits after its first bytes, so the edge is mid-upload by then. */
const DROP_AFTER_MS = 300;

/**
 * Sends `shape` with Node's HTTP client (which sends any of them as written) to `base` (a
 * workerd socket, `http://127.0.0.1:PORT`), as a visitor from `country`: Miniflare takes
 * `request.cf` from the `MF-CF-Blob` header. Resolves with the answer, or `null` once a dropping
 * client has dropped.
 */
export function sendShape(
  base: string,
  path: string,
  shape: RequestShape,
  country: string,
  extra: Readonly<Record<string, string>> = {},
): Promise<ShapeAnswer | null> {
  const url = new URL(path, base);
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: shape.method,
        headers: {
          ...shape.headers,
          ...extra,
          host: "edge.test",
          "mf-cf-blob": JSON.stringify({ country }),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    if (shape.dropMidUpload) {
      req.on("error", () => undefined);
      req.write(shape.body ?? "");
      sleep(DROP_AFTER_MS).then(() => {
        req.destroy();
        resolve(null);
      });
      return;
    }
    req.on("error", reject);
    req.end(shape.body);
  });
}
