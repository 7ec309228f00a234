/**
 * The parts of undici the gateway uses, each required from its own file. undici's entry point loads
 * all of undici (fetch, WebSocket, EventSource, its caches, mocks and interceptors: about 110 files),
 * and a pod holds ~3 MB less without what it never calls (docs/benchmarks.md, "What a gateway pod
 * loads"). undici is pinned in package-lock.json; `test/gateway/startup/pod-modules.test.ts` and
 * every upstream test fail if one of these paths moves in an upgrade.
 */
import { createRequire } from 'node:module';
import type * as Undici from 'undici';

const require = createRequire(import.meta.url);

export const Pool: typeof Undici.Pool = require('undici/lib/dispatcher/pool.js');
export type Pool = Undici.Pool;
export const Agent: typeof Undici.Agent = require('undici/lib/dispatcher/agent.js');

type RequestOptions = Omit<Undici.Dispatcher.RequestOptions, 'origin' | 'path' | 'method'> & {
  method: Undici.Dispatcher.HttpMethod;
};
type ApiRequest = (
  this: Undici.Dispatcher,
  opts: Undici.Dispatcher.RequestOptions,
) => Promise<Undici.Dispatcher.ResponseData>;
const apiRequest: ApiRequest = require('undici/lib/api/api-request.js');

/** undici's `request(url, {dispatcher, ...})`, through the dispatcher given. */
export function requestVia(
  dispatcher: Undici.Dispatcher,
  url: URL,
  opts: RequestOptions,
): Promise<Undici.Dispatcher.ResponseData> {
  return apiRequest.call(dispatcher, {
    ...opts,
    origin: url.origin,
    path: url.search ? `${url.pathname}${url.search}` : url.pathname,
  });
}

/** undici's FormData (the class its dispatchers encode as multipart), loaded with the first upload. */
export function newFormData(): Undici.FormData {
  const { FormData } = require('undici/lib/web/fetch/formdata.js') as { FormData: typeof Undici.FormData };
  return new FormData();
}
