import { GatewayError } from '../errors/index.ts';
import type { CacheBreakpoint, ChatMessage, ContentPart, ToolCall } from '../providers/types.ts';
import { marked } from './cache-control.ts';
import {
  BLOCK_TYPES,
  type ContentBlock,
  type CountTokensBody,
  contentBlock,
  type MessagesBody,
} from './messages-schema.ts';
import { unsupported } from './param-rules.ts';
import { invalidRequest } from './zod-error.ts';

/*
 * A Messages prompt (its system text and its turns of content blocks) as chat messages, the
 * canonical form every provider translation reads: text and images as parts, tool_use blocks as
 * tool calls, tool_result blocks as tool messages right after their call. Shared by POST
 * /v1/messages and count_tokens.
 */

function blocksOf(content: unknown[] | string, where: string): ContentBlock[] | string {
  if (typeof content === 'string') return content;
  return content.map((raw, j) => {
    const param = `${where}.content[${j}]`;
    const type = raw && typeof raw === 'object' ? (raw as { type?: unknown }).type : undefined;
    if (typeof type !== 'string' || !(BLOCK_TYPES as readonly string[]).includes(type))
      throw unsupported(
        `${param}.type`,
        `The content block type "${String(type)}" is not supported: send ${BLOCK_TYPES.join(', ')} blocks.`,
      );
    const parsed = contentBlock.safeParse(raw);
    if (!parsed.success) {
      const ge = invalidRequest(parsed.error);
      throw new GatewayError('invalid_request', `Invalid ${param}: ${ge.message.replace(/^Invalid /, '')}`, {
        param: `${param}${ge.param ? `.${ge.param}` : ''}`,
      });
    }
    return parsed.data;
  });
}

const imagePart = (b: Extract<ContentBlock, { type: 'image' }>): ContentPart => ({
  type: 'image_url',
  image_url: {
    url: b.source.type === 'url' ? b.source.url : `data:${b.source.media_type};base64,${b.source.data}`,
  },
});

/**
 * A tool result as a tool message's text; its images go to `images` (a tool message carries text
 * only outside Anthropic, so they follow the results as the user turn's image parts).
 */
function resultText(b: Extract<ContentBlock, { type: 'tool_result' }>, images: ContentPart[]): string {
  const c = b.content ?? '';
  const text =
    typeof c === 'string'
      ? c
      : c
          .flatMap((p) => {
            if (p.type === 'text') return [p.text];
            // Translated providers get deferred tools up front (messages-translate.ts): say it loaded.
            if (p.type === 'tool_reference') return [`Tool "${p.tool_name}" is loaded.`];
            images.push(imagePart(p));
            return [];
          })
          .join('\n');
  // The error flag has no field of its own outside Anthropic: the result says it.
  return b.is_error ? `Error: ${text}` : text;
}

/** Anthropic turns as chat messages: tool results become tool messages right after their call. */
function toMessages(body: Pick<MessagesBody, 'messages'>): ChatMessage[] {
  const out: ChatMessage[] = [];
  const pending = new Set<string>();
  body.messages.forEach((m, i) => {
    const where = `messages[${i}]`;
    const blocks = blocksOf(m.content, where);
    if (m.role === 'system') {
      const text =
        typeof blocks === 'string'
          ? blocks
          : blocks
              .map((b, j) => {
                if (b.type !== 'text')
                  throw new GatewayError('invalid_request', 'system turns carry text blocks only.', {
                    param: `${where}.content[${j}]`,
                  });
                return b.text;
              })
              .join('\n\n');
      out.push({ role: 'system', content: text, ...marked(blocks) });
      return;
    }
    if (m.role === 'assistant') {
      if (pending.size > 0)
        throw new GatewayError(
          'invalid_request',
          `${where}: the tool_use "${[...pending][0]}" has no tool_result in the user turn after it.`,
          { param: where },
        );
      if (typeof blocks === 'string') {
        out.push({ role: 'assistant', content: blocks });
        return;
      }
      let text = '';
      const calls: ToolCall[] = [];
      blocks.forEach((b, j) => {
        if (b.type === 'text') text += b.text;
        // Claude's own reasoning: only Claude reads it back (a native request carries it there).
        else if (b.type === 'thinking' || b.type === 'redacted_thinking') return;
        else if (b.type === 'tool_use') {
          calls.push({
            id: b.id,
            type: 'function',
            function: { name: b.name, arguments: JSON.stringify(b.input ?? {}) },
          });
          pending.add(b.id);
        } else
          throw new GatewayError('invalid_request', `${b.type} blocks belong in user turns.`, {
            param: `${where}.content[${j}]`,
          });
      });
      out.push({
        role: 'assistant',
        content: text || null,
        ...(calls.length ? { tool_calls: calls } : {}),
        ...marked(blocks),
      });
      return;
    }
    if (typeof blocks === 'string') {
      if (pending.size > 0)
        throw new GatewayError(
          'invalid_request',
          `${where}: the tool_use "${[...pending][0]}" has no tool_result in this turn.`,
          { param: where },
        );
      out.push({ role: 'user', content: blocks });
      return;
    }
    const parts: ContentPart[] = [];
    const images: ContentPart[] = [];
    blocks.forEach((b, j) => {
      const param = `${where}.content[${j}]`;
      if (b.type === 'tool_result') {
        if (!pending.has(b.tool_use_id))
          throw new GatewayError(
            'invalid_request',
            `No tool_use with id "${b.tool_use_id}" in the assistant turn before this tool_result.`,
            { param: `${param}.tool_use_id` },
          );
        pending.delete(b.tool_use_id);
        out.push({
          role: 'tool',
          tool_call_id: b.tool_use_id,
          content: resultText(b, images),
          ...marked([b]),
        });
      } else if (b.type === 'text') parts.push({ type: 'text', text: b.text });
      else if (b.type === 'image') parts.push(imagePart(b));
      else
        throw new GatewayError('invalid_request', `${b.type} blocks belong in assistant turns.`, { param });
    });
    parts.push(...images);
    if (pending.size > 0)
      throw new GatewayError(
        'invalid_request',
        `${where}: the tool_use "${[...pending][0]}" has no tool_result in this turn.`,
        { param: where },
      );
    if (parts.length === 0) return;
    const only = parts[0]!;
    out.push({
      role: 'user',
      content: parts.length === 1 && only.type === 'text' ? only.text : parts,
      ...marked(blocks.filter((b) => b.type !== 'tool_result')),
    });
  });
  if (pending.size > 0)
    throw new GatewayError(
      'invalid_request',
      `The tool_use "${[...pending][0]}" has no tool_result: end with a user turn that carries it.`,
      { param: 'messages' },
    );
  return out;
}

function systemText(system: MessagesBody['system']): string | undefined {
  if (system === undefined) return undefined;
  const text = typeof system === 'string' ? system : system.map((b) => b.text).join('\n\n');
  return text.length > 0 ? text : undefined;
}

/** A Messages prompt as chat messages, its system text apart. */
export interface MessagesPrompt {
  system?: string;
  /** The last breakpoint of the system text and the leading system turns. */
  systemCache?: CacheBreakpoint;
  turns: ChatMessage[];
}

/**
 * A Messages prompt as chat messages: its system text (with any system turns before the first
 * user or assistant turn, which say the same) and its turns.
 */
export function messagesPrompt(body: Pick<CountTokensBody, 'messages' | 'system'>): MessagesPrompt {
  const turns = toMessages(body);
  let lead = 0;
  while (turns[lead]?.role === 'system') lead++;
  const texts = [systemText(body.system), ...turns.slice(0, lead).map((m) => m.content as string)];
  const system = texts.filter((t) => t !== undefined && t !== '').join('\n\n');
  const cache = [
    typeof body.system === 'string' ? undefined : marked(body.system ?? []).cache,
    ...turns.slice(0, lead).map((m) => m.cache),
  ].findLast((c) => c !== undefined);
  return {
    ...(system ? { system, ...(cache ? { systemCache: cache } : {}) } : {}),
    turns: turns.slice(lead),
  };
}

export const promptAsMessages = (p: MessagesPrompt): ChatMessage[] => [
  ...(p.system
    ? [{ role: 'system' as const, content: p.system, ...(p.systemCache ? { cache: p.systemCache } : {}) }]
    : []),
  ...p.turns,
];

/** The chat messages of a Messages prompt, with its system text first (for count_tokens too). */
export function promptMessages(body: Pick<CountTokensBody, 'messages' | 'system'>): ChatMessage[] {
  return promptAsMessages(messagesPrompt(body));
}
