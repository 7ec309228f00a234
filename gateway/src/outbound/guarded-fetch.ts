import { fetch as undiciFetch } from 'undici';
import { checkUrl, type OutboundPolicy, outboundAgent } from './fetch.ts';

/** What fetch-based clients (the MCP SDK's HTTP transport) take as their `fetch`. */
export type GuardedFetch = (input: string | URL, init?: RequestInit) => Promise<Response>;

/**
 * A WHATWG fetch through the SSRF guard: the URL is checked before anything is sent, DNS answers as
 * the socket opens. Redirects are not followed: their target was never checked, so a 3xx comes back
 * to the caller as it is.
 */
export function guardedFetch(policy: OutboundPolicy): GuardedFetch {
  return async (input, init) => {
    const url = new URL(input);
    checkUrl(url, policy);
    const res = await undiciFetch(url, {
      ...(init as Parameters<typeof undiciFetch>[1]),
      redirect: 'manual',
      dispatcher: outboundAgent(policy),
    });
    // undici's Response is the class Node's global fetch returns; only its declared type differs.
    return res as unknown as Response;
  };
}
