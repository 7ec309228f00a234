import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/index.ts';
import type { CacheBreakpoint, NativeRequest } from '../providers/types.ts';
import { breakpoint, checkBreakpoints, collectBreakpoints } from './cache-control.ts';
import { isObjectSchema } from './common-schema.ts';
import { nativeMessages } from './messages-native.ts';
import { messagesPrompt, promptAsMessages } from './messages-prompt.ts';
import {
  type CountTokensBody,
  countTokensBody,
  MESSAGES_REFUSED,
  type MessagesBody,
  messagesBody,
} from './messages-schema.ts';
import type { NativeBody } from './native-schema.ts';
import { paramRules, refusedWhenSet, refuseParams, unsupported } from './param-rules.ts';
import { checkedToolName } from './tool-name.ts';

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

const TOOL_FIELDS = ['type', 'name', 'description', 'input_schema', 'cache_control', 'defer_loading'];

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
    if (obj.defer_loading != null && typeof obj.defer_loading !== 'boolean')
      throw new GatewayError('invalid_request', 'Invalid tool: defer_loading must be a boolean.', {
        param: `tools[${i}].defer_loading`,
      });
    // defer_loading (Claude's tool search) keeps a tool out of Claude's context until a search finds
    // it; a translated provider has no such stage and gets the tool up front, which it can call all
    // the same. A Claude slot gets the field as written.
    for (const key of Object.keys(obj))
      if (!TOOL_FIELDS.includes(key) && obj[key] != null)
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
  const p = messagesPrompt(body);
  return {
    body: {
      model: body.model,
      messages: promptAsMessages(p) as NativeBody['messages'],
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
