import { connect } from "node:net";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CompiledMap, serializeMap } from "../../core/index.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";
import { type PhpServer, startPhpServer } from "../helpers/php-server.js";

/** Answers with the request's `HTTP_*` variables as PHP built them. */
const ROUTER = resolve(import.meta.dirname, "fixtures/server-vars.php");
const VISITOR_IP = "203.0.113.7";
type ServerVars = Record<string, string>;

/** One HTTP/1.1 request written byte for byte, headers in the order given; the JSON body back. */
async function rawGet(url: string, headers: readonly [string, string][]): Promise<ServerVars> {
  const { hostname, port } = new URL(url);
  const head = headers.map(([k, v]) => `${k}: ${v}\r\n`).join("");
  const text = await new Promise<string>((done, fail) => {
    const socket = connect(Number(port), hostname, () => {
      socket.end(`GET / HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n${head}\r\n`);
    });
    let got = "";
    socket.on("data", (d: Buffer) => {
      got += d.toString("utf8");
    });
    socket.on("end", () => done(got));
    socket.on("error", fail);
  });
  return JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as ServerVars;
}

describe("client headers spelled any way CGI reads, at a real php -S origin behind workerd", () => {
  let php: PhpServer;
  let worker: TestWorker;

  beforeAll(async () => {
    php = await startPhpServer(ROUTER);
    worker = await startWorker({ DEBUG_TOKEN: "php-debug-token" });
    const base = buildMap(
      {
        default: { chain: ["php-1"], source: "country/_default" },
        countries: { DE: { chain: ["php-1"], source: "country/DE" } },
      },
      { rev: 12, originOf: () => php.url },
    );
    const de = base.countries.DE;
    if (!de) throw new Error("no DE");
    const map: CompiledMap = {
      ...base,
      countries: { DE: { ...de, attrs: { tier: "gold", tokenizer: "de" } } },
    };
    await worker.putMap(serializeMap(map));
  });
  afterAll(async () => {
    await worker?.dispose();
    await php?.stop();
  });

  const viaEdge = async (headers: Record<string, string>): Promise<ServerVars> => {
    const res = await worker.dispatch("/v/seg-1.ts", {
      country: "DE",
      headers: { "CF-Connecting-IP": VISITOR_IP, ...headers },
    });
    expect(res.status).toBe(200);
    return res.json<ServerVars>();
  };

  it("PHP reads the last of two spellings: sent straight to it, the underscore one wins", async () => {
    const vars = await rawGet(php.url, [
      ["X-Edge-Country", "DE"],
      ["X_Edge_Country", "KP"],
      ["X-Forwarded-For", VISITOR_IP],
      ["X_Forwarded_For", "6.6.6.6"],
    ]);
    expect(vars.HTTP_X_EDGE_COUNTRY).toBe("KP");
    expect(vars.HTTP_X_FORWARDED_FOR).toBe("6.6.6.6");
  });

  it.each([
    ["X_Edge_Country", "KP", "HTTP_X_EDGE_COUNTRY", "DE"],
    ["x_EDGE_country", "KP", "HTTP_X_EDGE_COUNTRY", "DE"],
    ["X-Edge_Country", "KP", "HTTP_X_EDGE_COUNTRY", "DE"],
    ["X_Forwarded_For", "6.6.6.6", "HTTP_X_FORWARDED_FOR", VISITOR_IP],
    ["X-Forwarded_For", "6.6.6.6", "HTTP_X_FORWARDED_FOR", VISITOR_IP],
    ["X_Forwarded_Host", "evil.example", "HTTP_X_FORWARDED_HOST", "edge.test"],
    ["X_Forwarded_Proto", "gopher", "HTTP_X_FORWARDED_PROTO", "http"],
    ["X_Edge_Attr_Tokenizer", "evil", "HTTP_X_EDGE_ATTR_TOKENIZER", "de"],
    ["X_Edge_Attr_Tier", "platinum", "HTTP_X_EDGE_ATTR_TIER", "gold"],
    ["X_Edge_Pool", "evil", "HTTP_X_EDGE_POOL", "php-1"],
    ["X_Edge_Revision", "999999", "HTTP_X_EDGE_REVISION", "12"],
  ])("%s: %s never replaces the edge's %s", async (name, spoof, variable, want) => {
    const vars = await viaEdge({ [name]: spoof });
    expect(vars[variable]).toBe(want);
    expect(JSON.stringify(vars)).not.toContain(spoof);
  });

  it.each([
    ["X-Real_IP", "HTTP_X_REAL_IP"],
    ["X_Real_IP", "HTTP_X_REAL_IP"],
    ["True_Client_IP", "HTTP_TRUE_CLIENT_IP"],
    ["X_Forwarded_Port", "HTTP_X_FORWARDED_PORT"],
    ["X_Edge_Attr_Extra", "HTTP_X_EDGE_ATTR_EXTRA"],
    ["X_Edge_Debug_Token", "HTTP_X_EDGE_DEBUG_TOKEN"],
    ["X_Edge_Signature", "HTTP_X_EDGE_SIGNATURE"],
    // workerd sends an origin no CF-Connecting-IP at all: nothing may stand in for it.
    ["CF_Connecting_IP", "HTTP_CF_CONNECTING_IP"],
    ["CF_IPCountry", "HTTP_CF_IPCOUNTRY"],
  ])("%s reaches the origin as nothing at all (%s unset)", async (name, variable) => {
    const vars = await viaEdge({ [name]: "6.6.6.6" });
    expect(vars[variable]).toBeUndefined();
  });

  it("passes the client's own underscore headers on, and the edge's values beside them", async () => {
    const vars = await viaEdge({ X_Request_Tag: "kept", "Accept-Language": "de" });
    expect(vars.HTTP_X_REQUEST_TAG).toBe("kept");
    expect(vars.HTTP_ACCEPT_LANGUAGE).toBe("de");
    expect(vars.HTTP_X_EDGE_COUNTRY).toBe("DE");
    expect(vars.HTTP_X_FORWARDED_FOR).toBe(VISITOR_IP);
  });
});
