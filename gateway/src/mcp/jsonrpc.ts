/**
 * JSON-RPC on the MCP endpoint: the spec's error codes and the shapes of answers. Every mistake of
 * a client is answered in this shape (HTTP 400, 404 or 413 by the transport rules, or 200 with the
 * error as the JSON-RPC response), never with a 5xx.
 */

export const RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
  resourceNotFound: -32002,
  /** 2026-07-28: a standard header disagrees with the body. */
  headerMismatch: -32020,
  /** 2026-07-28: the request names a protocol version this endpoint does not serve. */
  unsupportedVersion: -32022,
} as const;

export type RpcId = string | number;

export interface RpcError {
  jsonrpc: '2.0';
  id: RpcId | null;
  error: { code: number; message: string; data?: unknown };
}

export interface RpcResult {
  jsonrpc: '2.0';
  id: RpcId;
  result: Record<string, unknown>;
}

export type RpcResponse = RpcError | RpcResult;

export function rpcError(id: RpcId | null, code: number, message: string, data?: unknown): RpcError {
  return { jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } };
}

export function rpcResult(id: RpcId, result: Record<string, unknown>): RpcResult {
  return { jsonrpc: '2.0', id, result };
}

/** A refusal of the request as a whole, before dispatch: the HTTP status and the JSON-RPC error. */
export class RpcRefusal extends Error {
  readonly httpStatus: number;
  readonly body: RpcError;
  constructor(httpStatus: number, body: RpcError) {
    super(body.error.message);
    this.httpStatus = httpStatus;
    this.body = body;
  }
}

/** A method's answer is this error (HTTP 200 with the JSON-RPC error), e.g. an unknown tool. */
export class RpcFailure extends Error {
  readonly code: number;
  readonly data: unknown;
  constructor(code: number, message: string, data?: unknown) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

/** The id of a request body, when it has a usable one (for errors about the rest of it). */
export function idOf(body: unknown): RpcId | null {
  const id = (body as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
