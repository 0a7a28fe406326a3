import { type AppDeps, createApp, viewerRequest } from "./app.js";
import { isAppPath } from "./app-path.js";
import { badGateway } from "./bad-gateway.js";
import type { Env } from "./env.js";

/** The Worker's `fetch`, as workerd calls it. */
export interface EdgeWorker {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
}

/**
 * The deployed Worker: the Hono app (`createApp`) for the `/__edge/` namespace and any path
 * its router must decode; every other request, a viewer's, goes straight to `viewerRequest`, which
 * is what the app's catch-all route would call, without building a router context per request.
 * Either way an unexpected error is a 502 (`badGateway`), never a 500.
 */
export function createEdgeWorker(deps: AppDeps): EdgeWorker {
  const app = createApp(deps);
  return {
    fetch(request, env, ctx) {
      if (isAppPath(request.url)) return Promise.resolve(app.fetch(request, env, ctx));
      return viewerRequest(deps, request, env, ctx).catch(badGateway);
    },
  };
}
