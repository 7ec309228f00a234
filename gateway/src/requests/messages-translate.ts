import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/index.ts';
import type {
  CacheBreakpoint,
  ChatMessage,
  ContentPart,
  NativeRequest,
  ToolCall,
} from '../providers/types.ts';
import { breakpoint, checkBreakpoints, collectBreakpoints, marked } from './cache-control.ts';
import { isObjectSchema } from './common-schema.ts';
import { nativeMessages } from './messages-native.ts';
import {
  BLOCK_TYPES,
  type ContentBlock,
  type CountTokensBody,
  contentBlock,
  countTokensBody,
  MESSAGES_REFUSED,
  type MessagesBody,
  messagesBody,
} from './messages-schema.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refusedWhenSet, refuseParams, unsupported } from './param-rules.ts';
import { checkedToolName } from './tool-name.ts';
import { invalidRequest } from './zod-error.ts';

/**
 * Every key of messagesBody that is carried into the pipeline's body, or read by the surface itself
 * (`stream`). The surface refuses MESSAGES_REFUSED and any key the schema does not know.
 * test/gateway/messages/params.test.ts fails when a key of the schema is in neither list.
 */
export const MESSAGES_MAPPED = [
  'model',
  'messages',
  'system',
  'max_tokens',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'stream',
  'metadata',
  'tools',
  'tool_choice',
  'thinking',
  'output_config',
  'context_management',
  'service_tier',
] as const;

const REFUSED = refusedWhenSet(MESSAGES_REFUSED);
const METADATA = { metadata: { known: ['user_id'], says: 'metadata takes user_id' } };
const MESSAGES_PARAMS = paramRules(messagesBody.shape, REFUSED, { fields: METADATA });
const COUNT_TOKENS_PARAMS = paramRules(countTokensBody.shape, REFUSED, { fields: METADATA });

/** Refuses what POST /v1/messages cannot honour before the schema names anything else. */
export function rejectMessagesParams(raw: unknown): void {
  refuseParams(raw, MESSAGES_PARAMS);
}

/** The same for POST /v1/messages/count_tokens, whose body is the prompt half of a message's. */
export function rejectCountTokensParams(raw: unknown): void {
  refuseParams(raw, COUNT_TOKENS_PARAMS);
}

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

function tools(raw: unknown[] | undefined): NativeBody['tools'] {
  if (!raw) return undefined;
  return raw.map((t, i) => {
    const obj = t && typeof t === 'object' ? (t as Record<string, unknown>) : {};
    if (obj.type !== undefined && obj.type !== 'custom')
      throw unsupported(
        `tools[${i}].type`,
        `The tool type "${String(obj.type)}" is not supported: only client tools with input_schema are.`,
      );
    const name = checkedToolName(obj.name, `tools[${i}].name`);
    const schema = obj.input_schema;
    if (!isObjectSchema(schema))
      throw new GatewayError(
        'invalid_request',
        'Invalid tool: input_schema must be a JSON schema of type "object".',
        {
          param: `tools[${i}].input_schema`,
        },
      );
    for (const key of Object.keys(obj))
      if (!['type', 'name', 'description', 'input_schema', 'cache_control'].includes(key) && obj[key] != null)
        throw unsupported(`tools[${i}].${key}`, `The tool field "${key}" is not supported by this gateway.`);
    const cache = breakpoint(obj.cache_control);
    return {
      type: 'function' as const,
      function: {
        name,
        ...(typeof obj.description === 'string' ? { description: obj.description } : {}),
        parameters: schema as Record<string, unknown>,
      },
      ...(cache ? { cache } : {}),
    };
  });
}

function toolChoice(c: MessagesBody['tool_choice']): Pick<NativeBody, 'tool_choice' | 'parallel_tool_calls'> {
  if (!c) return {};
  const single = c.type !== 'none' && c.disable_parallel_tool_use ? { parallel_tool_calls: false } : {};
  switch (c.type) {
    case 'auto':
      return { tool_choice: 'auto', ...single };
    case 'any':
      return { tool_choice: 'required', ...single };
    case 'none':
      return { tool_choice: 'none' };
    case 'tool':
      return { tool_choice: { type: 'function', function: { name: c.name } }, ...single };
  }
}

/**
 * Extended thinking as the effort levels translated providers take; an `anthropic` slot gets
 * `thinking` itself (and the thinking blocks of earlier turns).
 */
function thinkingEffort(t: MessagesBody['thinking']): string | undefined {
  // adaptive: the model decides whether to think, which is every provider's default.
  if (t?.type !== 'enabled') return undefined;
  return t.budget_tokens <= 4096 ? 'low' : t.budget_tokens <= 16_384 ? 'medium' : 'high';
}

/**
 * Claude's effort as an effort level for translated providers: `high` is Claude's default and asks
 * for nothing; `low` and `medium` become reasoning_effort, and `max` the highest level every
 * provider takes, `high`. An `anthropic` slot gets output_config itself.
 */
function outputEffort(c: MessagesBody['output_config']): string | undefined {
  const e = c?.effort;
  if (e === 'max') return 'high';
  return e === 'low' || e === 'medium' ? e : undefined;
}

/**
 * A Messages prompt as chat messages: its system text (with any system turns before the first
 * user or assistant turn, which say the same) and its turns.
 */
function prompt(body: Pick<CountTokensBody, 'messages' | 'system'>): {
  system?: string;
  /** The last breakpoint of the system text and the leading system turns. */
  systemCache?: CacheBreakpoint;
  turns: ChatMessage[];
} {
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

const asMessages = (p: ReturnType<typeof prompt>): ChatMessage[] => [
  ...(p.system
    ? [{ role: 'system' as const, content: p.system, ...(p.systemCache ? { cache: p.systemCache } : {}) }]
    : []),
  ...p.turns,
];

/** The chat messages of a Messages prompt, with its system text first (for count_tokens too). */
export function promptMessages(body: Pick<CountTokensBody, 'messages' | 'system'>): ChatMessage[] {
  return asMessages(prompt(body));
}

/**
 * A session-memory workflow's session, continued by the `x-session-id` request header: the
 * Messages body has no place of its own for it (metadata takes user_id only).
 */
function sessionOf(headers: IncomingHttpHeaders): Pick<NativeBody, 'session_id'> {
  const id = headers['x-session-id'];
  return typeof id === 'string' && id !== '' ? { session_id: id } : {};
}

/** A Messages request as the pipeline takes it: the canonical body, and the body as sent for Claude. */
export interface MessagesRequest {
  body: NativeBody;
  native: NativeRequest;
}

/**
 * Claude's breakpoint rules (cache-control.ts) over the breakpoints the tools and blocks ask for, in
 * the order Claude processes them. count_tokens checks them too: a prompt it counts is one that
 * /v1/messages would take.
 */
export function checkMessagesBreakpoints(body: Pick<CountTokensBody, 'tools' | 'system' | 'messages'>): void {
  const out: CacheBreakpoint[] = [];
  collectBreakpoints(body.tools, out);
  collectBreakpoints(body.system, out);
  for (const m of body.messages) collectBreakpoints(m.content, out);
  checkBreakpoints(out, 'messages');
}

/**
 * A Messages body (after rejectMessagesParams and the schema) as the pipeline's body, with the
 * request as the client sent it (`raw`, its headers) for slots that speak the Messages API.
 */
export function messagesRequest(
  body: MessagesBody,
  raw: Record<string, unknown>,
  headers: IncomingHttpHeaders,
): MessagesRequest {
  const toolList = tools(body.tools);
  const effort = outputEffort(body.output_config) ?? thinkingEffort(body.thinking);
  const forced = body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool';
  if (forced && !toolList?.length)
    throw new GatewayError('invalid_request', `tool_choice "${body.tool_choice?.type}" needs tools.`, {
      param: 'tool_choice',
    });
  checkMessagesBreakpoints(body);
  const p = prompt(body);
  return {
    body: {
      model: body.model,
      messages: asMessages(p) as NativeBody['messages'],
      max_tokens: body.max_tokens,
      ...(body.temperature !== undefined ? { temperature: body.temperature } : {}),
      ...(body.top_p !== undefined ? { top_p: body.top_p } : {}),
      ...(body.top_k !== undefined ? { top_k: body.top_k } : {}),
      ...(body.stop_sequences?.length ? { stop: body.stop_sequences } : {}),
      ...(toolList?.length ? { tools: toolList, ...toolChoice(body.tool_choice) } : {}),
      ...(effort ? { reasoning_effort: effort } : {}),
      ...(body.metadata?.user_id ? { user: body.metadata.user_id } : {}),
      ...(body.service_tier
        ? { service_tier: body.service_tier === 'standard_only' ? 'default' : 'auto' }
        : {}),
      ...(body.stream ? { stream: true } : {}),
      ...sessionOf(headers),
    },
    native: nativeMessages(raw, headers, { turns: p.turns.length, system: p.system }),
  };
}
