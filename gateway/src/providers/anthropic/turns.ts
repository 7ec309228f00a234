/** Canonical chat messages as Messages API turns (shared by the translated and the native body). */
import {
  JSON_ONLY_INSTRUCTION,
  parseDataUrl,
  parseJsonArgs,
  type SystemText,
  structuredInstruction,
  systemRuns,
  textOf,
} from '../common.ts';
import type { CacheBreakpoint, ChatMessage, ChatRequest } from '../types.ts';

export const DEFAULT_MAX_TOKENS = 4096;

export interface CacheControl {
  type: 'ephemeral';
  ttl?: '5m' | '1h';
}

export type Block = (
  | { type: 'text'; text: string }
  | {
      type: 'image';
      source: { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };
    }
  | { type: 'tool_use'; id: string; name: string; input: unknown }
  | { type: 'tool_result'; tool_use_id: string; content: string | Block[] }
) & { cache_control?: CacheControl };

export const cacheControl = (cache: CacheBreakpoint): CacheControl => ({
  type: 'ephemeral',
  ...(cache.ttl ? { ttl: cache.ttl } : {}),
});

/**
 * The system texts as Claude's `system`: one string, or text blocks split at the breakpoints, each
 * block that ends at one carrying its `cache_control`.
 */
export function systemValue(texts: readonly SystemText[]): string | Block[] {
  const runs = systemRuns(texts);
  if (runs.length === 1 && !runs[0]!.cache) return runs[0]!.text;
  return runs.map((r) => ({
    type: 'text' as const,
    text: r.text,
    ...(r.cache ? { cache_control: cacheControl(r.cache) } : {}),
  }));
}

export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

function contentBlocks(content: ChatMessage['content']): string | Block[] {
  if (content == null) return '';
  if (typeof content === 'string') return content;
  const out: Block[] = [];
  for (const part of content) {
    if (part.type === 'text') {
      out.push({ type: 'text', text: part.text });
    } else {
      const url = part.image_url.url;
      const data = parseDataUrl(url);
      out.push({
        type: 'image',
        source: data ? { type: 'base64', media_type: data.mimeType, data: data.data } : { type: 'url', url },
      });
    }
  }
  return out;
}

export function asBlocks(content: string | Block[]): Block[] {
  if (typeof content !== 'string') return content;
  return content.length > 0 ? [{ type: 'text', text: content }] : [];
}

/** Appends a message, merging consecutive same-role turns (tool results must share one user turn). */
export function pushMessage(
  out: AnthropicMessage[],
  role: 'user' | 'assistant',
  content: string | Block[],
): void {
  const last = out[out.length - 1];
  if (last && last.role === role) {
    last.content = [...asBlocks(last.content), ...asBlocks(content)];
    return;
  }
  out.push({ role, content });
}

/** A breakpoint on the block pushed last (a string turn becomes a text block to carry it). */
function markLast(out: AnthropicMessage[], cache: CacheBreakpoint): void {
  const turn = out[out.length - 1];
  if (!turn) return;
  const blocks = asBlocks(turn.content);
  const last = blocks[blocks.length - 1];
  if (!last) return;
  last.cache_control = cacheControl(cache);
  turn.content = blocks;
}

/** Canonical messages as Messages API turns, with the system texts apart (in order). */
export function anthropicTurns(messages: readonly ChatMessage[]): {
  system: SystemText[];
  messages: AnthropicMessage[];
} {
  const system: SystemText[] = [];
  const out: AnthropicMessage[] = [];
  for (const msg of messages) {
    switch (msg.role) {
      case 'system':
      case 'developer': {
        const text = textOf(msg.content);
        if (text.length > 0 || msg.cache) system.push({ text, cache: msg.cache });
        // Its breakpoint stays with the system text: no turn to mark.
        continue;
      }
      case 'user':
        pushMessage(out, 'user', contentBlocks(msg.content));
        break;
      case 'assistant': {
        if (msg.tool_calls && msg.tool_calls.length > 0) {
          const blocks = asBlocks(contentBlocks(msg.content));
          for (const tc of msg.tool_calls) {
            blocks.push({
              type: 'tool_use',
              id: tc.id,
              name: tc.function.name,
              input: parseJsonArgs(tc.function.arguments),
            });
          }
          pushMessage(out, 'assistant', blocks);
        } else {
          pushMessage(out, 'assistant', contentBlocks(msg.content));
        }
        break;
      }
      case 'tool':
        pushMessage(out, 'user', [
          { type: 'tool_result', tool_use_id: msg.tool_call_id ?? '', content: contentBlocks(msg.content) },
        ]);
        break;
    }
    if (msg.cache) markLast(out, msg.cache);
  }
  return { system, messages: out };
}

/** The instruction that asks for structured output (no native JSON-schema mode: the gateway validates). */
export function outputInstruction(req: ChatRequest): string | undefined {
  if (req.structured) return structuredInstruction(req.structured);
  return req.json ? JSON_ONLY_INSTRUCTION : undefined;
}
