/**
 * True when the request's path must go through the app's router (`createApp`): it starts with
 * `/__edge` (the edge's own namespace, or a path beside it), or it holds a `%` (the router
 * matches the decoded path, so `/%5F_edge/route` is the edge's too). Every other path is a
 * viewer's, which the router would only hand to the proxy. `url` is absolute, as `request.url`.
 */
export function isAppPath(url: string): boolean {
  // The path starts at the first `/` after `scheme://` and a host of at least one character.
  const start = url.indexOf("/", url.indexOf(":") + 4);
  if (start === -1) return true;
  if (url.startsWith("/__edge", start)) return true;
  for (let i = start; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 37) return true; // %
    if (c === 63 || c === 35) return false; // ? #
  }
  return false;
}
