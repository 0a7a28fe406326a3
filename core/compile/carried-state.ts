import type { CompiledMap } from "../contract/compiled-map.js";

/**
 * Everything a compile carries forward from an earlier one, and nothing else of an earlier map
 * (docs/reference.md §3.4):
 * - `default` and `countries`: the earlier routes. A route the compile makes again is handed out
 *   as the earlier object (so the pusher sees routing unchanged), and a route that shows its rule
 *   whole is that rule's last valid form.
 * - `kept`: the last valid rules no route shows whole (§3.4).
 * - `sheds`: each shedding pool's share, when it last stepped, and since when its p90 has been
 *   below the fall watermark (§9).
 * - `viewer_sheds`: the same for each country's shed by its own viewers (§12).
 * - `fences`: the last valid value of each fence, so a damaged `fence/` value never lifts it (§10).
 *
 * A compiled map is one (it carries exactly these); `carriedState` (carry-forward.ts) builds one from the
 * maps a process has.
 */
export type CarriedState = Pick<
  CompiledMap,
  "default" | "countries" | "kept" | "sheds" | "viewer_sheds" | "fences"
>;
