/** What a multivariant playlist gains (docs/reference.md §15). */
export interface SteeringTags {
  /** `SERVER-URI`: the steering endpoint, carrying the session's state. */
  readonly serverUri: string;
  /** The pathway the playlist's variant streams belong to: the viewer's first pool now. */
  readonly pathway: string;
}

const STREAM_INF = "#EXT-X-STREAM-INF:";
const IFRAME_INF = "#EXT-X-I-FRAME-STREAM-INF:";

/** Quoted-string attribute values of HLS may hold neither `"` nor line breaks. */
function quotable(value: string): boolean {
  return !/["\r\n]/.test(value);
}

/**
 * An HLS multivariant playlist with `#EXT-X-CONTENT-STEERING` after `#EXTM3U` and `PATHWAY-ID` on
 * each `#EXT-X-STREAM-INF` and `#EXT-X-I-FRAME-STREAM-INF`; `null` to leave the text as it is:
 * not a playlist (no `#EXTM3U` first), a media playlist (`#EXTINF`, or no variant stream), or one
 * that already steers (its own `#EXT-X-CONTENT-STEERING` or `PATHWAY-ID`s). Line endings are kept.
 */
export function steerHlsPlaylist(text: string, tags: SteeringTags): string | null {
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (!body.startsWith("#EXTM3U")) return null;
  if (!body.includes(STREAM_INF) || body.includes("#EXTINF")) return null;
  if (body.includes("#EXT-X-CONTENT-STEERING") || body.includes("PATHWAY-ID=")) return null;
  if (!quotable(tags.serverUri) || !quotable(tags.pathway)) return null;
  const eol = body.includes("\r\n") ? "\r\n" : "\n";
  const lines = body.split(/\r?\n/);
  const pathwayAttr = `,PATHWAY-ID="${tags.pathway}"`;
  const out: string[] = [];
  for (const [i, line] of lines.entries()) {
    if (line.startsWith(STREAM_INF) || line.startsWith(IFRAME_INF)) out.push(line + pathwayAttr);
    else out.push(line);
    if (i === 0)
      out.push(
        `#EXT-X-CONTENT-STEERING:SERVER-URI="${tags.serverUri}",PATHWAY-ID="${tags.pathway}"`,
      );
  }
  return (text.length === body.length ? "" : "\uFEFF") + out.join(eol);
}
