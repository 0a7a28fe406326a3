import type { SteerFormat } from "../../core/contract/steering-manifest.js";
import { steeringUri } from "../../core/contract/steering-uri.js";
import { isEdgeAnswer } from "../plain-response.js";
import { boundedBody } from "./bounded-body.js";
import { steerDashMpd } from "./dash-steering-tags.js";
import { steerHlsPlaylist } from "./hls-steering-tags.js";

/**
 * The largest playlist or MPD rewritten (1 MiB: far above any real multivariant playlist or
 * VOD MPD); a larger one passes through unchanged, and only this much is ever held.
 */
export const MAX_STEERED_BYTES = 1 << 20;

/** What the rewrite needs of the viewer's route. */
export interface SteerView {
  /** The viewer's pathway order now (its first pool first). */
  readonly pools: readonly string[];
  /** The pin parameter (`STEER_PARAM`). */
  readonly param: string;
}

const HLS_TYPES = ["application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl"];
const DASH_TYPES = ["application/dash+xml"];
/** Types an origin may send a playlist as when it does not name one; the path decides then. */
const VAGUE_TYPES = ["", "application/octet-stream", "text/plain"];

function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  if (start === -1) return "/";
  const q = url.slice(start).search(/[?#]/);
  return (q === -1 ? url.slice(start) : url.slice(start, start + q)).toLowerCase();
}

/** The manifest format of a response, by its type, else (a vague type) by its path. */
export function manifestFormat(url: string, contentType: string | null): SteerFormat | null {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (HLS_TYPES.includes(type)) return "hls";
  if (DASH_TYPES.includes(type)) return "dash";
  if (!VAGUE_TYPES.includes(type)) return null;
  const path = pathOf(url);
  if (path.endsWith(".m3u8")) return "hls";
  if (path.endsWith(".mpd")) return "dash";
  return null;
}

function rewritten(format: SteerFormat, text: string, url: string, view: SteerView): string | null {
  const first = view.pools[0];
  if (first === undefined) return null;
  if (format === "hls")
    return steerHlsPlaylist(text, { serverUri: steeringUri("hls", first), pathway: first });
  return steerDashMpd(text, {
    serverUri: steeringUri("dash", null),
    pools: view.pools,
    mpdUrl: url,
    param: view.param,
  });
}

/**
 * The viewer's response with steering added in passing (`STEER="on"`, docs/reference.md §15):
 * a whole (200) GET answer of an origin that is an HLS multivariant playlist or a DASH MPD of at
 * most {@link MAX_STEERED_BYTES} gains its steering tags. Everything else (media playlists,
 * segments, ranges, edge answers, playlists that steer already, too large, not UTF-8 or
 * malformed) is returned with the same bytes.
 */
export async function steeredResponse(
  request: Request,
  response: Response,
  view: SteerView,
): Promise<Response> {
  if (request.method !== "GET" || response.status !== 200 || isEdgeAnswer(response))
    return response;
  const format = manifestFormat(request.url, response.headers.get("Content-Type"));
  if (format === null) return response;
  const declared = Number(response.headers.get("Content-Length") ?? "0");
  if (declared > MAX_STEERED_BYTES) return response;
  const read = await boundedBody(response.body, MAX_STEERED_BYTES);
  const text = read.kind === "text" ? rewritten(format, read.text, request.url, view) : null;
  const body = read.kind === "stream" ? read.body : (text ?? read.bytes);
  const out = new Response(body, response);
  if (text !== null) {
    out.headers.delete("Content-Length");
    // The bytes are the edge's now: a validator of the origin's would not match them.
    out.headers.delete("ETag");
    out.headers.delete("Content-MD5");
    out.headers.delete("Digest");
    out.headers.delete("Repr-Digest");
    out.headers.delete("Content-Digest");
  }
  return out;
}
