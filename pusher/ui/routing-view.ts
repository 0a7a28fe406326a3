import type { CompileResult } from "../../core/index.js";
import type { ObservedPair } from "../observed-map.js";
import { toUiMap, type UiMap } from "./ui-document.js";

/**
 * The pusher's last compiled map, as `/ui` shows it. The pusher hands it every compile; the page
 * form is built only when someone asks (at most once per compile), so a pusher nobody watches
 * pays nothing for it.
 */
export class RoutingView {
  private latest: CompileResult | null = null;
  private built: UiMap | null = null;
  private readonly listeners = new Set<() => void>();
  /** Bumped on every compile; the event stream compares it to what it last sent. */
  version = 0;

  constructor(
    private readonly floorPool: string,
    /** What viewers get now (`observed/`); none when not given. */
    private readonly observed: () => Iterable<ObservedPair> = () => [],
  ) {}

  /** Records a compile and tells the listeners (the open `/ui/events` streams). */
  update(result: CompileResult): void {
    this.latest = result;
    this.built = null;
    this.version += 1;
    for (const l of this.listeners) l();
  }

  /** The last compile in page form, or null before the first one. */
  map(): UiMap | null {
    if (!this.latest) return null;
    this.built ??= toUiMap(this.latest, this.floorPool, this.observed());
    return this.built;
  }

  /** Calls `listener` after each compile until the returned function is called. */
  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
