import { hmacHex } from "../../core/contract/edge-signature.js";
import edge from "../../worker/index.js";
import floor from "./contract-floor.js";

/** Bindings of the path-cost harness: the routing Worker's, plus the floor's origin. */
interface HarnessEnv {
  readonly ROUTING: KVNamespace;
  readonly ORIGIN: string;
  readonly ORIGIN_SIGNING_KEY?: string;
}

const SIGNING_KEY = "bench-signing-key-0123456789abcdef";

const HEADERS = {
  host: "video.example.com",
  "user-agent": "Mozilla/5.0 (X11; Linux x86_64) bench",
  accept: "*/*",
  "accept-encoding": "gzip, br",
  "cf-connecting-ip": "203.0.113.7",
};

/** What a loopback origin answers, made without any I/O. */
function originAnswer(): Response {
  return new Response("segment", {
    headers: {
      "content-type": "video/mp2t",
      "content-length": "7",
      "cache-control": "public, max-age=60",
      date: "Wed, 02 Dec 2026 03:00:00 GMT",
      etag: '"abc"',
    },
  });
}

/**
 * `GET /?side=edge|floor|signed|hmac|none&n=N`: runs that side's `fetch` N times (`hmac`: one
 * `hmacHex` per request, `none`: only the request and the answer) in this isolate with
 * `fetch` answering at once, so what is left is each side's own JS and runtime calls per request
 * (`bench/experiments/worker-path-cost.ts` times it from outside: workerd's clocks stand still
 * while a request computes).
 */
export default {
  async fetch(request: Request, env: HarnessEnv, ctx: ExecutionContext): Promise<Response> {
    const q = new URL(request.url).searchParams;
    const side = q.get("side") ?? "edge";
    const n = Number(q.get("n") ?? "1000");
    const realFetch = globalThis.fetch;
    globalThis.fetch = async () => originAnswer();
    const edgeEnv = {
      ROUTING: env.ROUTING,
      ISOLATE_CACHE_SECONDS: "3600",
      ...(side === "signed" ? { ORIGIN_SIGNING_KEY: SIGNING_KEY } : {}),
    } as never;
    let status = 0;
    try {
      for (let i = 0; i < n; i++) {
        const req = new Request("https://video.example.com/video/segment-1.ts?q=1", {
          headers: HEADERS,
          cf: { country: "DE" },
        } as RequestInit);
        let res: Response;
        if (side === "floor") res = await floor.fetch(req, { ORIGIN: env.ORIGIN });
        else if (side === "none") res = originAnswer();
        else if (side === "hmac") {
          await hmacHex(
            SIGNING_KEY,
            `${i}\nGET\nvideo.example.com\n/video/segment-1.ts?q=1\np001\nDE\n1`,
          );
          res = originAnswer();
        } else res = await edge.fetch(req, edgeEnv, ctx);
        status = res.status;
        await res.body?.cancel();
      }
    } finally {
      globalThis.fetch = realFetch;
    }
    return new Response(String(status));
  },
};
