import type { IncomingHttpHeaders } from 'node:http';
import type { NativeRequest } from '../providers/types.ts';
import { MESSAGES_REFUSED, messagesBody } from './messages-schema.ts';

/**
 * `anthropic-beta` features forwarded with a native body: they change how Claude answers within
 * what the gateway reads back (thinking between tool calls, finer tool streaming, longer output,
 * context editing, system turns and tool changes mid-conversation, tool search's deferred tools,
 * thinking token counts, redacted thinking, caching, effort). Others are not forwarded: the fields
 * they enable are
 * refused by the surface (MCP servers, server tools, files) or they concern the caller's own
 * Anthropic account (OAuth) or a price the gateway does not know (the 1M-token context).
 */
export const FORWARDED_BETAS = [
  'claude-code-',
  'interleaved-thinking-',
  'fine-grained-tool-streaming-',
  'token-efficient-tools-',
  'output-128k-',
  'context-management-',
  'mid-conversation-system-',
  'mid-conversation-tool-changes-',
  'advanced-tool-use-',
  'thinking-token-count-',
  'redact-thinking-',
  'prompt-caching-',
  'extended-cache-ttl-',
  'effort-',
] as const;

const FORWARDED = new Set<string>(Object.keys(messagesBody.shape));
for (const name of ['model', 'stream', ...MESSAGES_REFUSED]) FORWARDED.delete(name);

function betas(headers: IncomingHttpHeaders): string | undefined {
  const raw = headers['anthropic-beta'];
  const names = (Array.isArray(raw) ? raw : [raw ?? ''])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '' && FORWARDED_BETAS.some((prefix) => v.startsWith(prefix)));
  return names.length > 0 ? [...new Set(names)].join(',') : undefined;
}

/**
 * The Messages request as the client sent it, for slots that speak the Messages API (NativeRequest):
 * every key the surface knows, as sent, except what the adapter sets (`model`, `stream`), keys that
 * ask for nothing (null, and the refused ones, which the surface let through only when unset).
 * `prompt` says how the canonical request stands for it: its system text and its number of turns.
 */
export function nativeMessages(
  raw: Record<string, unknown>,
  headers: IncomingHttpHeaders,
  prompt: { turns: number; system: string | undefined },
): NativeRequest {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(raw))
    if (FORWARDED.has(name) && value !== null && value !== undefined) body[name] = value;
  const beta = betas(headers);
  return {
    dialect: 'anthropic-messages',
    body,
    headers: beta ? { 'anthropic-beta': beta } : {},
    turns: prompt.turns,
    ...(prompt.system !== undefined ? { system: prompt.system } : {}),
  };
}
