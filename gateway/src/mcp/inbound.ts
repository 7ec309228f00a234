import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { idOf, RPC, RpcRefusal, rpcError } from './jsonrpc.ts';

/** The stateless era: every POST carries its protocol version, client and capabilities in `_meta`. */
export const MODERN_VERSIONS = ['2026-07-28'] as const;
/** The session era, newest first: `initialize` negotiates one of these. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'] as const;
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS];

export interface JsonRpcMessage {
  jsonrpc: '2.0';
  id?: string | number;
  method?: string;
  params?: Record<string, unknown>;
  result?: unknown;
  error?: unknown;
}

export type Inbound =
  | { era: 'legacy'; message: JsonRpcMessage }
  | { era: 'modern'; message: JsonRpcMessage; revision: string };

export interface InboundHeaders {
  protocolVersion: string | undefined;
  method: string | undefined;
  name: string | undefined;
}

/** Which body field `Mcp-Name` mirrors, per method (the Streamable HTTP binding's table). */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;

function decodeName(value: string): string | undefined {
  const m = SENTINEL.exec(value.trim());
  if (!m) return value.trim();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(m[1] ?? '', 'base64'));
  } catch {
    return undefined;
  }
}

function unsupported(id: string | number | null, requested: string): RpcRefusal {
  return new RpcRefusal(
    400,
    rpcError(id, RPC.unsupportedVersion, `Unsupported protocol version: ${requested}`, {
      supported: SUPPORTED_VERSIONS,
      requested,
    }),
  );
}

function mismatch(id: string | number | null, header: string, detail: string): RpcRefusal {
  return new RpcRefusal(
    400,
    rpcError(id, RPC.headerMismatch, `Bad Request: the request headers and body disagree: ${detail}`, {
      mismatch: { header, body: detail },
    }),
  );
}

/**
 * Decides a POST's era from its body (the SDK's classifier: the `_meta` envelope claim wins, the
 * headers are cross-checked), then applies what the classifier leaves to the server: the version
 * gate (-32022) and the presence and `Mcp-Name` half of the standard-header check (-32020).
 * Throws RpcRefusal for anything malformed.
 */
export function classifyPost(headers: InboundHeaders, body: unknown): Inbound {
  if (Array.isArray(body))
    throw new RpcRefusal(
      400,
      rpcError(
        null,
        RPC.invalidRequest,
        'Bad Request: JSON-RPC batches are not supported; send one message per POST.',
      ),
    );
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    body,
    ...(headers.protocolVersion !== undefined ? { protocolVersionHeader: headers.protocolVersion } : {}),
    ...(headers.method !== undefined ? { mcpMethodHeader: headers.method } : {}),
    ...(headers.name !== undefined ? { mcpNameHeader: headers.name } : {}),
  });
  const id = idOf(body);
  if (outcome.kind === 'reject')
    throw new RpcRefusal(outcome.httpStatus, rpcError(id, outcome.code, outcome.message, outcome.data));
  const message = body as JsonRpcMessage;
  if (outcome.kind === 'legacy') {
    const requested = headers.protocolVersion;
    if (requested !== undefined && !(LEGACY_VERSIONS as readonly string[]).includes(requested))
      throw unsupported(id, requested);
    return { era: 'legacy', message };
  }
  const revision = outcome.classification.revision ?? '';
  if (!(MODERN_VERSIONS as readonly string[]).includes(revision)) throw unsupported(id, revision);
  if (outcome.messageKind === 'request') {
    if (headers.protocolVersion === undefined)
      throw mismatch(id, '(missing)', 'the required MCP-Protocol-Version header is absent');
    if (headers.method === undefined)
      throw mismatch(
        id,
        '(missing)',
        `the body names method ${message.method} but the required Mcp-Method header is absent`,
      );
    const field = NAME_SOURCE[message.method ?? ''];
    const value = field ? message.params?.[field] : undefined;
    if (field && typeof value === 'string') {
      if (headers.name === undefined)
        throw mismatch(
          id,
          '(missing)',
          `the body carries params.${field}="${value}" but the required Mcp-Name header is absent`,
        );
      const decoded = decodeName(headers.name);
      if (decoded !== value)
        throw mismatch(
          id,
          headers.name,
          `the body carries params.${field}="${value}" but the Mcp-Name header names "${decoded ?? headers.name}"`,
        );
    }
  }
  return { era: 'modern', message, revision };
}

/** The version `initialize` answers with: the client's when this endpoint serves it, else the newest. */
export function negotiateLegacy(requested: unknown): string {
  return typeof requested === 'string' && (LEGACY_VERSIONS as readonly string[]).includes(requested)
    ? requested
    : LEGACY_VERSIONS[0];
}
