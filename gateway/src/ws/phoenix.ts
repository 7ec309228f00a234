/**
 * Phoenix Channels v2 JSON frames, as the official `phoenix` client speaks them (vsn=2.0.0):
 * `[join_ref, ref, topic, event, payload]`, replies are `phx_reply` with `{status, response}`,
 * heartbeats go to topic `phoenix`.
 */
export type Frame = [string | null, string | null, string, string, Record<string, unknown>];

export function parseFrame(raw: string): Frame | undefined {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 5) return undefined;
  const [joinRef, ref, topic, event, payload] = v as unknown[];
  const refOk = (x: unknown) => x === null || typeof x === 'string';
  if (!refOk(joinRef) || !refOk(ref) || typeof topic !== 'string' || typeof event !== 'string')
    return undefined;
  const p = payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? payload : {};
  return [joinRef as string | null, ref as string | null, topic, event, p as Record<string, unknown>];
}

export const reply = (
  joinRef: string | null,
  ref: string | null,
  topic: string,
  status: 'ok' | 'error',
  response: Record<string, unknown> = {},
): string => JSON.stringify([joinRef, ref, topic, 'phx_reply', { status, response }]);

export const push = (joinRef: string | null, topic: string, event: string, payload: unknown): string =>
  JSON.stringify([joinRef, null, topic, event, payload]);

/** The phoenix client's authToken travels as a WebSocket subprotocol: `base64url.bearer.phx.<base64>`. */
export const AUTH_TOKEN_PREFIX = 'base64url.bearer.phx.';

/** Close codes (4000-4999 are the application's). */
export const CLOSE = {
  invalidToken: 4001,
  tokenUsed: 4002,
  forbiddenChannel: 4003,
  badFrame: 4004,
  /** RFC 6455 "service restart": the client reconnects, to another pod. */
  draining: 1012,
} as const;
