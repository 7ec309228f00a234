import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { Agent, requestVia } from '../upstream/undici-parts.ts';
import { isBlockedAddress } from './addresses.ts';

/** Refused by the SSRF guard; no connection was opened. */
export class BlockedDestinationError extends Error {
  readonly code = 'OUTBOUND_BLOCKED';
}

export interface OutboundPolicy {
  /** Project outboundFetch.allowPrivateNetworks. */
  allowPrivateNetworks: boolean;
  /**
   * Origins (`http://127.0.0.1:8443`) let through without checks, for code that knows a
   * destination (tests of the redirect rule); never filled from configuration.
   */
  trustedOrigins?: ReadonlySet<string>;
}

export interface OutboundResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** At most the first 4 KiB of the body (for logs). */
  bodySnippet: string;
}

const MAX_REDIRECTS = 3;

/**
 * DNS answers are checked as the socket is opened (the resolved address is the one connected to,
 * so a name that resolves to a public address for a check and a private one for the connection,
 * DNS rebinding, cannot slip through).
 */
const guardedLookup: LookupFunction = (hostname, options, callback) => {
  dnsLookup(hostname, { ...options, all: true }, (err, addresses: LookupAddress[]) => {
    if (err) return callback(err, '', 0);
    const bad = addresses.find((a) => isBlockedAddress(a.address));
    if (bad || addresses.length === 0)
      return callback(
        new BlockedDestinationError(
          `${hostname} resolves to a private or reserved address (${bad?.address ?? 'none'})`,
        ),
        '',
        0,
      );
    if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
    const first = addresses[0] as LookupAddress;
    callback(null, first.address, first.family);
  });
};

const guardedAgent = new Agent({ connect: { lookup: guardedLookup }, keepAliveTimeout: 4000 });
const openAgent = new Agent({ keepAliveTimeout: 4000 });

/** The connection pool a policy allows: DNS answers checked as sockets open, or no checks. */
export const outboundAgent = (policy: OutboundPolicy) =>
  policy.allowPrivateNetworks ? openAgent : guardedAgent;

/** Refuses a URL before any connection: scheme, literal private addresses, loopback names. */
export function checkUrl(url: URL, policy: OutboundPolicy): void {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new BlockedDestinationError(`${url.protocol} URLs are not fetched`);
  if (policy.allowPrivateNetworks || policy.trustedOrigins?.has(url.origin)) return;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  // Literal addresses never reach the lookup: check them here.
  if (isIP(host) && isBlockedAddress(host))
    throw new BlockedDestinationError(`${host} is a private or reserved address`);
  if (host === 'localhost' || host.endsWith('.localhost'))
    throw new BlockedDestinationError(`${host} is a loopback name`);
}

/**
 * The dispatcher for one outbound request on behalf of a project, after the checks made before DNS
 * (the lookup checks again as it connects): for callers that stream the answer themselves (MCP).
 */
export function guardedDispatcher(url: URL, policy: OutboundPolicy): InstanceType<typeof Agent> {
  checkUrl(url, policy);
  return policy.allowPrivateNetworks ? openAgent : guardedAgent;
}

/**
 * One outbound request on behalf of a project, through the SSRF guard (before DNS, after DNS, and
 * again for every redirect, which is followed by hand, at most three, only for GET/HEAD or 307/308).
 */
export async function outboundFetch(
  target: string,
  init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string; timeoutMs: number },
  policy: OutboundPolicy,
): Promise<OutboundResponse> {
  let url = new URL(target);
  const signal = AbortSignal.timeout(init.timeoutMs);
  for (let hop = 0; ; hop++) {
    checkUrl(url, policy);
    const res = await requestVia(outboundAgent(policy), url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal,
      headersTimeout: init.timeoutMs,
      bodyTimeout: init.timeoutMs,
    });
    const location = res.headers.location;
    if (
      res.statusCode >= 300 &&
      res.statusCode < 400 &&
      typeof location === 'string' &&
      hop < MAX_REDIRECTS
    ) {
      await res.body.dump();
      if (init.method !== 'GET' && res.statusCode !== 307 && res.statusCode !== 308)
        return { status: res.statusCode, headers: res.headers, bodySnippet: '' };
      url = new URL(location, url);
      continue;
    }
    let snippet = '';
    for await (const chunk of res.body) {
      if (snippet.length < 4096) snippet += Buffer.from(chunk as Uint8Array).toString('utf8');
    }
    return { status: res.statusCode, headers: res.headers, bodySnippet: snippet.slice(0, 4096) };
  }
}
