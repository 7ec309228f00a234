import { Client, StreamableHTTPClientTransport, type Tool } from '@modelcontextprotocol/client';
import { canonicalJson, sha256Hex } from '#contract';
import { guardedFetch } from '#gateway/outbound/guarded-fetch';

/** Why a probe did not list the server's tools; they become the Reachable condition's reason. */
export const PROBE_FAILURES = [
  'AddressBlocked',
  'ConnectionFailed',
  'Unauthorized',
  'Timeout',
  'ProtocolError',
] as const;
export type ProbeFailure = (typeof PROBE_FAILURES)[number];

export interface ProbeTarget {
  url: string;
  /** Unsealed upstream headers (the credential), sent on every request of the probe. */
  headers: Record<string, string>;
  /** Deadline of the whole probe: connect, version negotiation and every tools/list page. */
  timeoutMs: number;
  /** The Project's outboundFetch.allowPrivateNetworks or the server's own: the gateway's SSRF rule. */
  allowPrivateNetworks: boolean;
}

export type ProbeResult =
  | {
      ok: true;
      protocolVersion: string;
      serverName: string | undefined;
      toolNames: string[];
      catalogueHash: string;
    }
  | { ok: false; reason: ProbeFailure; message: string };

/** Pages of tools/list followed at most; a server that pages forever is not waited for. */
const MAX_PAGES = 100;
const CLIENT_INFO = { name: 'switchyard-operator', version: '0.1.0' };

/**
 * The catalogue's hash: what a client sees of each tool, in name order, canonical JSON. Equal
 * catalogues hash alike whatever order the server listed them in.
 */
export function catalogueHash(tools: readonly Tool[]): string {
  const seen = [...tools]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((t) => ({
      name: t.name,
      title: t.title ?? null,
      description: t.description ?? null,
      inputSchema: t.inputSchema ?? null,
      outputSchema: t.outputSchema ?? null,
      annotations: t.annotations ?? null,
    }));
  return sha256Hex(canonicalJson(seen));
}

function* causes(err: unknown): Generator<unknown> {
  for (let e = err, depth = 0; e !== undefined && e !== null && depth < 8; depth++) {
    yield e;
    e = (e as { cause?: unknown }).cause;
  }
}

/** The first line of the deepest message that says something (SDK errors wrap "fetch failed"). */
function describe(err: unknown): string {
  const messages = [...causes(err)]
    .map((e) => (e instanceof Error ? e.message : String(e)))
    .filter((m) => m && m !== 'fetch failed');
  return (messages.at(-1) ?? 'unknown error').split('\n')[0]!.slice(0, 500);
}

export function classify(err: unknown, timedOut: boolean): { reason: ProbeFailure; message: string } {
  const chain = [...causes(err)];
  const code = (e: unknown) => (e as { code?: unknown }).code;
  const status = (e: unknown) =>
    (e as { status?: unknown }).status ?? (e as { data?: { status?: unknown } }).data?.status;
  if (chain.some((e) => code(e) === 'OUTBOUND_BLOCKED'))
    return {
      reason: 'AddressBlocked',
      message: `refused by the SSRF guard: ${describe(err)}; a private address needs the MCPServer's allowPrivateNetworks (or the Project's outboundFetch.allowPrivateNetworks)`,
    };
  if (
    chain.some(
      (e) =>
        status(e) === 401 ||
        status(e) === 403 ||
        /\b(401|403)\b|unauthori[sz]ed/i.test(String((e as Error)?.message)),
    )
  )
    return { reason: 'Unauthorized', message: `the server refused the credentials: ${describe(err)}` };
  if (
    timedOut ||
    chain.some(
      (e) =>
        /timeout|timed out/i.test(String(code(e) ?? '')) ||
        /timed? ?out/i.test(String((e as Error)?.message)),
    )
  )
    return { reason: 'Timeout', message: `no answer in time: ${describe(err)}` };
  if (
    chain.some((e) =>
      /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|UND_ERR_SOCKET|UND_ERR_CONNECT_TIMEOUT)$/.test(
        String(code(e) ?? ''),
      ),
    )
  )
    return { reason: 'ConnectionFailed', message: `cannot connect: ${describe(err)}` };
  return { reason: 'ProtocolError', message: `not a working MCP server: ${describe(err)}` };
}

/**
 * Connects to one MCP server as a client would (the official SDK, version negotiation `auto`: the
 * 2026-07-28 `server/discover` first, the 2025 `initialize` handshake as fallback), lists every tool
 * and hangs up. Outbound requests go through the SSRF guard; nothing is called but discovery and lists.
 */
export async function probeMcpServer(target: ProbeTarget): Promise<ProbeResult> {
  const deadline = AbortSignal.timeout(target.timeoutMs);
  const client = new Client(CLIENT_INFO, {
    versionNegotiation: { mode: 'auto', probe: { timeoutMs: target.timeoutMs } },
  });
  const transport = new StreamableHTTPClientTransport(new URL(target.url), {
    fetch: guardedFetch({ allowPrivateNetworks: target.allowPrivateNetworks }),
    requestInit: { headers: target.headers, signal: deadline },
  });
  const timedOut = new Promise<never>((_, reject) =>
    deadline.addEventListener('abort', () => reject(new Error(`timed out after ${target.timeoutMs} ms`)), {
      once: true,
    }),
  );
  const work = async (): Promise<ProbeResult> => {
    await client.connect(transport, { timeout: target.timeoutMs });
    const tools: Tool[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const listed = await client.listTools(cursor ? { cursor } : {}, { timeout: target.timeoutMs });
      tools.push(...listed.tools);
      cursor = listed.nextCursor;
      if (!cursor) break;
    }
    const info = client.getServerVersion();
    return {
      ok: true,
      protocolVersion: client.getNegotiatedProtocolVersion() ?? 'unknown',
      serverName: info ? `${info.name} ${info.version}`.slice(0, 256) : undefined,
      toolNames: tools.map((t) => t.name),
      catalogueHash: catalogueHash(tools),
    };
  };
  try {
    return await Promise.race([work(), timedOut]);
  } catch (err) {
    return { ok: false, ...classify(err, deadline.aborted) };
  } finally {
    // A legacy server holds a session for us: end it (DELETE) rather than leave it to expire.
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}
