/**
 * Prompt-cache breakpoints as clients write them: Anthropic's `cache_control` on Messages blocks
 * and tools, and the same field on chat content parts (the convention of OpenAI-shaped routers for
 * Claude). Each becomes a CacheBreakpoint at the end of its message, which the translators of
 * providers with explicit breakpoints read.
 */
import { z } from 'zod';
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
  return messages.map((m) => {
    if (!hasControl(m)) return m as ChatMessage;
    const parts = m.content as PartInput[];
    const content = parts.map(({ cache_control, ...part }) => part as ContentPart);
    return { ...m, content, ...marked(parts) };
  });
}
