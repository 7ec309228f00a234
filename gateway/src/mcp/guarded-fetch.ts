import { Readable } from 'node:stream';
import { guardedDispatcher, type OutboundPolicy } from '../outbound/fetch.ts';
import { requestVia } from '../upstream/undici-parts.ts';

/** What the MCP client's transport calls to reach an upstream: fetch's shape. */
export type McpFetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** An answer larger than this is cut off: the transport then fails the call, the gateway stays up. */
export const MAX_UPSTREAM_MESSAGE_BYTES = 16 * 1024 * 1024;

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    out[name] = value;
  });
  return out;
}

/**
 * fetch for upstream MCP servers through the SSRF guard (the URL before DNS, every resolved address
 * as the socket opens), on the gateway's own undici dispatchers. Redirects are not followed: an
 * upstream that moved is misconfigured, and following one would leave the guard's view. A body past
 * MAX_UPSTREAM_MESSAGE_BYTES ends the stream with an error and calls `onOverflow` (the client's
 * transport would otherwise wait for the rest of the message until the call's timeout).
 */
export function guardedFetch(policy: OutboundPolicy, onOverflow: () => void = () => undefined): McpFetch {
  return async (target, init) => {
    const url = new URL(target);
    const dispatcher = guardedDispatcher(url, policy);
    const method = (init?.method ?? 'GET').toUpperCase() as 'GET' | 'POST' | 'DELETE';
    const res = await requestVia(dispatcher, url, {
      method,
      headers: headersOf(init),
      body: typeof init?.body === 'string' ? init.body : undefined,
      signal: init?.signal ?? undefined,
    });
    const headers = new Headers();
    for (const [name, value] of Object.entries(res.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
    }
    const noBody = res.statusCode === 204 || res.statusCode === 304 || method === 'DELETE';
    if (noBody) {
      await res.body.dump();
      return new Response(null, { status: res.statusCode, headers });
    }
    let seen = 0;
    const capped = Readable.from(
      (async function* () {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          seen += chunk.length;
          if (seen > MAX_UPSTREAM_MESSAGE_BYTES) {
            onOverflow();
            throw new Error('upstream message too large');
          }
          yield chunk;
        }
      })(),
    );
    return new Response(Readable.toWeb(capped) as ReadableStream<Uint8Array>, {
      status: res.statusCode,
      headers,
    });
  };
}
