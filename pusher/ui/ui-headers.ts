/**
 * Response headers of every `/ui` response: a CSP that allows only the pusher's own origin (no
 * inline script, no framing, no form posts, no `<base>`), no MIME sniffing, no framing for older
 * browsers, no referrer, and no cross-origin reads of the data.
 */
export const UI_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
    "object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};
