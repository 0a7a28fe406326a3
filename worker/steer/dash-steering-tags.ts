/** What an MPD gains (docs/reference.md §15). */
export interface MpdSteering {
  /** The steering endpoint (`<ContentSteering>`'s text). */
  readonly serverUri: string;
  /** The pools a viewer may be steered to, its first pool first (`defaultServiceLocation`). */
  readonly pools: readonly string[];
  /**
   * The MPD's own URL (as the viewer asked for it): each pool's `BaseURL` is its folder with the
   * pin parameter, absolute, as players only take a `serviceLocation` from an absolute one.
   */
  readonly mpdUrl: string;
  /** The pin parameter (`STEER_PARAM`). */
  readonly param: string;
}

function xmlEscape(text: string): string {
  return text
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;");
}

/** Where the `<MPD …>` start tag ends (just past its `>`), or -1; quoted `>` do not count. */
function startTagEnd(text: string, from: number): number {
  let quote = "";
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (quote !== "") {
      if (c === quote) quote = "";
    } else if (c === '"' || c === "'") quote = c;
    else if (c === ">") return text[i - 1] === "/" ? -1 : i + 1;
    else if (c === "<") return -1;
  }
  return -1;
}

/**
 * A DASH MPD with `<ContentSteering>` and one `<BaseURL serviceLocation>` per pool (each carrying
 * the pin parameter) as the first children of `<MPD>`; `null` to leave the text as it is: no
 * unprefixed `<MPD>` element, one that already steers (`<ContentSteering>` or a `serviceLocation`),
 * or one whose origin set its own MPD-level `<BaseURL>` (steering must not replace it).
 */
export function steerDashMpd(text: string, s: MpdSteering): string | null {
  const first = s.pools[0];
  if (first === undefined) return null;
  const open = text.search(/<MPD[\s>]/);
  if (open === -1) return null;
  if (text.includes("<ContentSteering") || text.includes("serviceLocation")) return null;
  const end = startTagEnd(text, open + 4);
  if (end === -1) return null;
  const period = text.indexOf("<Period", end);
  const head = period === -1 ? text.slice(end) : text.slice(end, period);
  if (head.includes("<BaseURL")) return null;
  const indent = "\n  ";
  const steering = `${indent}<ContentSteering defaultServiceLocation="${xmlEscape(first)}" queryBeforeStart="false">${xmlEscape(s.serverUri)}</ContentSteering>`;
  const bases = s.pools
    .map(
      (p) =>
        `${indent}<BaseURL serviceLocation="${xmlEscape(p)}">${xmlEscape(new URL(`./?${s.param}=${encodeURIComponent(p)}`, s.mpdUrl).href)}</BaseURL>`,
    )
    .join("");
  return text.slice(0, end) + steering + bases + text.slice(end);
}
