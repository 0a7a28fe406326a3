import { convertV4MiniflareOptions, Miniflare, type V4MiniflareOptions } from "miniflare";

/**
 * A Miniflare from the v4 option shape (`script`, `modules`, `kvNamespaces`, `bindings`, …).
 * Miniflare 5, which wrangler 4.164 ships, takes workerd-style worker configs; its own converter
 * maps the v4 shape onto them, so the tests keep the options they have always used.
 */
export function newMiniflare(options: V4MiniflareOptions): Miniflare {
  return new Miniflare(convertV4MiniflareOptions(options));
}
