/**
 * The bodies Cloudflare's API answers with: the v4 JSON envelope
 * (`{success, errors:[{code, message, error_chain?}], messages, result}`) from the API itself,
 * and an HTML error page when the edge in front of it fails (5xx), as browsers see it.
 */

/** One entry of the envelope's `errors`. */
export interface Failure {
  readonly code: number;
  readonly message: string;
  /** Nested causes, as Cloudflare sends for 6003 (e.g. 6111 for the Authorization header). */
  readonly error_chain?: readonly Failure[];
}

/** The v4 envelope as JSON text. */
export function envelope(
  success: boolean,
  result: unknown,
  errors: readonly Failure[] = [],
): string {
  return JSON.stringify({ success, errors, messages: [], result });
}

/** Reason phrases of the edge's own 5xx pages (Cloudflare's 5xx error documentation). */
const EDGE_TITLES: Readonly<Record<number, string>> = {
  500: "Internal server error",
  502: "Bad gateway",
  503: "Service unavailable",
  504: "Gateway time-out",
  520: "Web server is returning an unknown error",
  521: "Web server is down",
  522: "Connection timed out",
  523: "Origin is unreachable",
  524: "A timeout occurred",
};

/** The 5xx statuses the edge answers with an HTML page. */
export const EDGE_STATUSES: readonly number[] = Object.keys(EDGE_TITLES).map(Number);

/** An HTML page like the one Cloudflare's edge serves for a 5xx, with a ray id. */
export function edgeErrorPage(status: number, host: string, rayId: string): string {
  const title = EDGE_TITLES[status] ?? "Error";
  return `<!DOCTYPE html>
<!--[if lt IE 7]> <html class="no-js ie6 oldie" lang="en-US"> <![endif]-->
<html class="no-js" lang="en-US">
<head>
<title>${host} | ${status}: ${title}</title>
<meta charset="UTF-8" />
<meta name="robots" content="noindex, nofollow" />
</head>
<body>
<div id="cf-wrapper">
  <div id="cf-error-details" class="cf-error-details-wrapper">
    <h1><span class="cf-error-type">Error</span> <span class="cf-error-code">${status}</span></h1>
    <h2 class="cf-subheadline">${title}</h2>
  </div>
  <div class="cf-error-footer">
    <p>Cloudflare Ray ID: <strong class="font-semibold">${rayId}</strong></p>
  </div>
</div>
</body>
</html>
`;
}

/** A 404 page of something that is not the API (a proxy, a wrong `CF_API_BASE_URL`). */
export function foreignNotFoundPage(path: string): string {
  return `<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1><p>${path.replace(/[<>&"]/g, "")}</p></body></html>\n`;
}
