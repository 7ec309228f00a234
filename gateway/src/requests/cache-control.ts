/**
 * Prompt-cache breakpoints as clients write them: Anthropic's `cache_control` on Messages blocks
 * and tools, and the same field on chat content parts (the convention of OpenAI-shaped routers for
 * Claude). Each becomes a CacheBreakpoint at the end of its message, which the translators of
 * providers with explicit breakpoints read.
 */
import { z } from 'zod';
import { GatewayError } from '../errors/index.ts';
import type { CacheBreakpoint, ChatMessage, ContentPart } from '../providers/types.ts';

/** The field as accepted: any type and lifetime; only `ephemeral` asks for a breakpoint. */
export const cacheControl = z.object({ type: z.string(), ttl: z.string().optional() }).nullish();

/**
 * A `cache_control` as a breakpoint: Claude's one cache type is `ephemeral`, with an optional
 * lifetime of five minutes (the default) or an hour; anything else asks for nothing.
 */
export function breakpoint(control: unknown): CacheBreakpoint | undefined {
  if (!control || typeof control !== 'object') return undefined;
  const { type, ttl } = control as { type?: unknown; ttl?: unknown };
  if (type !== 'ephemeral') return undefined;
  return ttl === '1h' || ttl === '5m' ? { ttl } : {};
}

/** Claude's limit on Anthropic, Vertex AI and Bedrock: prompt-cache breakpoints per request. */
export const MAX_BREAKPOINTS = 4;

const asksForBreakpoint = (x: unknown): boolean =>
  x !== null && typeof x === 'object' && 'cache_control' in x && breakpoint(x.cache_control) !== undefined;

/** How many of the blocks (or parts, or tools) carry a `cache_control` that asks for a breakpoint. */
export function countMarked(blocks: readonly unknown[] | string | null | undefined): number {
  if (!Array.isArray(blocks)) return 0;
  let n = 0;
  for (const b of blocks) if (asksForBreakpoint(b)) n++;
  return n;
}

/**
 * Refuses more breakpoints than Claude takes, on every route: the limit is Claude's, but a workflow
 * may fail over to Claude, and a request refused upstream would read as the provider's failure.
 * In Anthropic's own words, so a Messages client reads what Claude itself would have said.
 */
export function checkBreakpointCount(found: number, param: string): void {
  if (found > MAX_BREAKPOINTS)
    throw new GatewayError(
      'invalid_request',
      `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${found}.`,
      { param },
    );
}

/**
 * The breakpoint of a message's blocks, at the end of the message: its last block's `cache_control`
 * that asks for one. A breakpoint on an earlier block moves to the message's end, which caches the
 * same prefix and a little more.
 */
export function marked(blocks: readonly object[] | string | null): Pick<ChatMessage, 'cache'> {
  if (blocks === null || typeof blocks === 'string') return {};
  const cache = blocks
    .map((b) => ('cache_control' in b ? breakpoint(b.cache_control) : undefined))
    .findLast((c) => c !== undefined);
  return cache ? { cache } : {};
}

type PartInput = ContentPart & { cache_control?: unknown };
type MessageInput = Omit<ChatMessage, 'content'> & { content: string | PartInput[] | null };

const hasControl = (m: MessageInput): boolean =>
  Array.isArray(m.content) && m.content.some((p) => p.cache_control != null);

/**
 * Chat messages whose content parts may carry `cache_control`, as canonical messages: the parts
 * without it and the message with its breakpoint. The same array when no part has one.
 */
export function withBreakpoints(messages: MessageInput[]): ChatMessage[] {
  if (!messages.some(hasControl)) return messages as ChatMessage[];
  let found = 0;
  for (const m of messages) found += countMarked(m.content);
  checkBreakpointCount(found, 'messages');
  return messages.map((m) => {
    if (!hasControl(m)) return m as ChatMessage;
    const parts = m.content as PartInput[];
    const content = parts.map(({ cache_control, ...part }) => part as ContentPart);
    return { ...m, content, ...marked(parts) };
  });
}
