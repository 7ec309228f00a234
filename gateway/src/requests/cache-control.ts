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

/** Appends the breakpoints that the blocks (or parts, or tools) ask for, in their order. */
export function collectBreakpoints(
  blocks: readonly unknown[] | string | null | undefined,
  out: CacheBreakpoint[],
): void {
  if (!Array.isArray(blocks)) return;
  for (const b of blocks) {
    if (b === null || typeof b !== 'object' || !('cache_control' in b)) continue;
    const cache = breakpoint(b.cache_control);
    if (cache) out.push(cache);
  }
}

/**
 * Refuses breakpoints Claude would refuse, on every route (a workflow may fail over to Claude, and a
 * refusal from upstream would read as the provider's failure), in Claude's words: more than four,
 * or a one-hour breakpoint after a five-minute one. `breakpoints` come in the order Claude
 * processes them: tools, system, messages.
 */
export function checkBreakpoints(breakpoints: readonly CacheBreakpoint[], param: string): void {
  if (breakpoints.length > MAX_BREAKPOINTS)
    throw new GatewayError(
      'invalid_request',
      `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${breakpoints.length}.`,
      { param },
    );
  const firstShort = breakpoints.findIndex((b) => b.ttl !== '1h');
  if (firstShort !== -1 && breakpoints.slice(firstShort).some((b) => b.ttl === '1h'))
    throw new GatewayError(
      'invalid_request',
      "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.",
      { param },
    );
}

/**
 * The breakpoint of a message's blocks, at the end of the message: its last block's `cache_control`
 * that asks for one. A breakpoint on an earlier block moves to the message's end, which caches the
 * same prefix and a little more.
 */
export function marked(blocks: readonly object[] | string | null): Pick<ChatMessage, 'cache'> {
  const found: CacheBreakpoint[] = [];
  collectBreakpoints(blocks, found);
  const cache = found.at(-1);
  return cache ? { cache } : {};
}

type PartInput = ContentPart & { cache_control?: unknown };
type MessageInput = Omit<ChatMessage, 'content'> & { content: string | PartInput[] | null };

const isSystem = (m: MessageInput): boolean => m.role === 'system' || m.role === 'developer';

const hasControl = (m: MessageInput): boolean =>
  Array.isArray(m.content) && m.content.some((p) => p.cache_control != null);

/**
 * Chat messages whose content parts may carry `cache_control`, as canonical messages: the parts
 * without it and the message with its breakpoint. The same array when no part has one.
 */
export function withBreakpoints(messages: MessageInput[]): ChatMessage[] {
  if (!messages.some(hasControl)) return messages as ChatMessage[];
  // Claude reads system text first, wherever the system messages stand in the conversation.
  const found: CacheBreakpoint[] = [];
  for (const m of messages) if (isSystem(m)) collectBreakpoints(m.content, found);
  for (const m of messages) if (!isSystem(m)) collectBreakpoints(m.content, found);
  checkBreakpoints(found, 'messages');
  return messages.map((m) => {
    if (!hasControl(m)) return m as ChatMessage;
    const parts = m.content as PartInput[];
    const content = parts.map(({ cache_control, ...part }) => part as ContentPart);
    return { ...m, content, ...marked(parts) };
  });
}
