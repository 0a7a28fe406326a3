/**
 * Signed edge requests (docs/reference.md §11): the Worker signs what it decided, an origin
 * checks it. The same code runs in workerd and in Node, on Web Crypto's HMAC-SHA-256.
 */

/** The header that carries the signature: `t=<unix seconds>,v1=<hex>[,v1=<hex>]`. */
export const SIGNATURE_HEADER = "X-Edge-Signature";

/** The prefix of the market-attribute headers the signature covers. */
export const ATTR_HEADER_PREFIX = "x-edge-attr-";

/** A signature older (or further in the future) than this fails verification by default. */
export const DEFAULT_SIGNATURE_MAX_AGE_SECONDS = 300;

/** What one signature covers. */
export interface SignedFields {
  /** Unix seconds at signing. */
  readonly t: number;
  readonly method: string;
  /** The public host, as the edge sends it in `X-Forwarded-Host`. */
  readonly host: string;
  /** Path and query of the public request, e.g. `/v/1.ts?x=1`. */
  readonly pathAndQuery: string;
  readonly pool: string;
  readonly country: string;
  readonly revision: string;
  /** `X-Edge-Attr-*` headers, any order: lower-case name with the prefix, and value. */
  readonly attrs: ReadonlyArray<readonly [string, string]>;
}

/** Every field of a signature but `t` and the pool: what one request's attempts share. */
export type RequestFields = Omit<SignedFields, "t" | "pool">;

/**
 * A request's canonical string around its `t` and pool: `t`, `before`, the pool, `after`, one
 * per line. Worked out once per request; each attempt only adds its time and pool.
 */
export interface CanonicalFrame {
  /** The upper-case method, the lower-case host, path and query. */
  readonly before: string;
  /** Country, revision, then `name:value` per attribute header sorted by lower-case name. */
  readonly after: string;
}

/**
 * `\nname:value` per attribute header (`name` lower-case), sorted by name: the end of the
 * canonical string. Depends on the route alone, so a caller may keep it per route.
 */
export function attrLines(attrs: RequestFields["attrs"]): string {
  const sorted = attrs
    .map(([name, value]) => [name.toLowerCase(), value] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let lines = "";
  for (const [name, value] of sorted) lines += `\n${name}:${value}`;
  return lines;
}

/** The {@link CanonicalFrame} of a request's fields whose {@link attrLines} are known. */
export function frameWithAttrLines(f: Omit<RequestFields, "attrs">, lines: string): CanonicalFrame {
  return {
    before: `${f.method.toUpperCase()}\n${f.host.toLowerCase()}\n${f.pathAndQuery}`,
    after: `${f.country}\n${f.revision}${lines}`,
  };
}

/** The {@link CanonicalFrame} of a request's fields. */
export function canonicalFrame(f: RequestFields): CanonicalFrame {
  return frameWithAttrLines(f, attrLines(f.attrs));
}

/** The canonical string of `frame` signed at `t` for `pool`. */
export function framedString(frame: CanonicalFrame, t: number, pool: string): string {
  return `${t}\n${frame.before}\n${pool}\n${frame.after}`;
}

/**
 * The canonical string: one field per line, `t`, the upper-case method, the lower-case host,
 * path and query, pool, country, revision, then `name:value` for every attribute header sorted
 * by its lower-case name.
 */
export function canonicalString(f: SignedFields): string {
  return framedString(canonicalFrame(f), f.t, f.pool);
}

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

/** A secret's Web Crypto HMAC-SHA-256 key, for signing and verifying; imported once. */
function hmacKey(secret: string): Promise<CryptoKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey(
      "raw",
      encoder.encode(secret),
      { name: "HMAC", hash: "SHA-256" },
      false,
      ["sign", "verify"],
    );
    // A handful of secrets exist at once (current and previous); the bound is for safety only.
    if (keys.size >= 16) keys.clear();
    keys.set(secret, key);
    key.catch(() => keys.delete(secret));
  }
  return key;
}

function fromHex(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/.test(hex)) return null;
  const out = new Uint8Array(new ArrayBuffer(32));
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** HMAC-SHA-256 of `data` under `secret`, in lower-case hex. */
export async function hmacHex(secret: string, data: string): Promise<string> {
  const mac = new Uint8Array(
    await crypto.subtle.sign("HMAC", await hmacKey(secret), encoder.encode(data)),
  );
  let hex = "";
  for (const byte of mac) hex += (byte < 16 ? "0" : "") + byte.toString(16);
  return hex;
}

/**
 * The `X-Edge-Signature` value of `data` signed at `t`: one `v1` per secret, in the order given
 * (the current secret first, then the previous one during a rotation).
 */
export async function signatureValue(
  data: string,
  t: number,
  secrets: readonly string[],
): Promise<string> {
  const macs = await Promise.all(secrets.map((secret) => hmacHex(secret, data)));
  let value = `t=${t}`;
  for (const mac of macs) value += `,v1=${mac}`;
  return value;
}

/**
 * The `X-Edge-Signature` value for `fields`: one `v1` per secret, in the order given (the
 * current secret first, then the previous one during a rotation).
 */
export function signEdgeRequest(fields: SignedFields, secrets: readonly string[]): Promise<string> {
  return signatureValue(canonicalString(fields), fields.t, secrets);
}

/** A parsed `X-Edge-Signature`, or `null` when it is not one. */
export function parseSignatureHeader(
  value: string,
): { readonly t: number; readonly v1: readonly string[] } | null {
  let t: number | null = null;
  const v1: string[] = [];
  for (const part of value.split(",")) {
    const eq = part.indexOf("=");
    const name = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (eq < 0) return null;
    if (name === "t") {
      if (t !== null || !/^\d{1,12}$/.test(v)) return null;
      t = Number(v);
    } else if (name === "v1") {
      v1.push(v.toLowerCase());
    }
  }
  return t === null || v1.length === 0 ? null : { t, v1 };
}

/** Options of `verifyEdgeSignature`. */
export interface VerifyOptions {
  /** Oldest signature accepted, in seconds (also how far in the future `t` may be). */
  readonly maxAgeSeconds?: number;
  /** Unix milliseconds now; `Date.now()` by default. */
  readonly now?: number;
}

function pathAndQueryOf(url: string): string {
  const u = new URL(url);
  return u.pathname + u.search;
}

/**
 * True when `request` (as the origin received it: its own `Host`; the public host is read from
 * `X-Forwarded-Host`, which the edge sets) carries an `X-Edge-Signature` made with one of
 * `secrets` over its method, public host, path and query, `X-Edge-Pool`, `X-Edge-Country`,
 * `X-Edge-Revision` and every `X-Edge-Attr-*`, no older than `maxAgeSeconds` (300 by default).
 */
export async function verifyEdgeSignature(
  request: Request,
  secrets: readonly string[],
  opts: VerifyOptions = {},
): Promise<boolean> {
  const header = request.headers.get(SIGNATURE_HEADER);
  const parsed = header === null ? null : parseSignatureHeader(header);
  if (!parsed || secrets.length === 0) return false;
  const maxAge = opts.maxAgeSeconds ?? DEFAULT_SIGNATURE_MAX_AGE_SECONDS;
  const now = Math.floor((opts.now ?? Date.now()) / 1000);
  if (Math.abs(now - parsed.t) > maxAge) return false;
  const h = request.headers;
  const attrs: [string, string][] = [];
  for (const [name, value] of h) if (name.startsWith(ATTR_HEADER_PREFIX)) attrs.push([name, value]);
  const data = encoder.encode(
    canonicalString({
      t: parsed.t,
      method: request.method,
      host: h.get("X-Forwarded-Host") ?? "",
      pathAndQuery: pathAndQueryOf(request.url),
      pool: h.get("X-Edge-Pool") ?? "",
      country: h.get("X-Edge-Country") ?? "",
      revision: h.get("X-Edge-Revision") ?? "",
      attrs,
    }),
  );
  for (const secret of secrets) {
    const key = await hmacKey(secret);
    for (const hex of parsed.v1) {
      const mac = fromHex(hex);
      if (mac && (await crypto.subtle.verify("HMAC", key, mac, data))) return true;
    }
  }
  return false;
}
