/**
 * POST /v1/messages: checks what Claude checks (refusal), decides the outcome once (thinking when
 * asked for, then tool_use per toolcall.ts or the deterministic text cut by stop_sequences and
 * max_tokens; prompt-cache usage per claude-state.ts), then renders it as a message object or as
 * the SSE event sequence.
 */
import type { Exchange } from '../exchange.ts';
import { applyLimits, newId, replyText, tokens } from '../generate.ts';
import { sendError, sendJson } from '../respond.ts';
import { writeStream } from '../sse.ts';
import { planToolCall, type ToolMode } from '../toolcall.ts';
import type { CacheSegment } from './claude-state.ts';
import { anthropicError } from './errors.ts';
import type { AnthropicMessage, MessagesRequest } from './schemas.ts';
import { type ContentOut, type MessageOutcome, usageOf } from './shapes.ts';
import { messageFrames } from './stream.ts';

function blocksText(content: AnthropicMessage['content'] | undefined, withToolResults: boolean): string {
  if (content === undefined) return '';
  if (typeof content === 'string') return content;
  const parts: string[] = [];
  for (const b of content) {
    if (b.type === 'text') parts.push(b.text);
    else if (withToolResults && b.type === 'tool_result') {
      parts.push(typeof b.content === 'string' ? b.content : JSON.stringify(b.content ?? ''));
    } else if (withToolResults && b.type === 'tool_use') parts.push(JSON.stringify(b.input));
  }
  return parts.join(' ');
}

function lastUserText(messages: readonly AnthropicMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    const text = blocksText(m.content, false);
    if (text) return text;
  }
  return '';
}

function lastIsToolResult(messages: readonly AnthropicMessage[]): boolean {
  const last = messages[messages.length - 1];
  return !!last && Array.isArray(last.content) && last.content.some((b) => b.type === 'tool_result');
}

function toolMode(req: MessagesRequest): ToolMode {
  const c = req.tool_choice;
  if (!c || c.type === 'auto') return { mode: 'auto' };
  if (c.type === 'none') return { mode: 'none' };
  if (c.type === 'any') return { mode: 'required' };
  return { mode: 'named', name: c.name };
}

function systemText(system: MessagesRequest['system']): string {
  if (system === undefined) return '';
  return typeof system === 'string' ? system : system.map((b) => b.text).join(' ');
}

/** Real Claude's trigger for a redacted_thinking block (Anthropic documents it for testing). */
export const REDACTED_THINKING_TRIGGER =
  'ANTHROPIC_MAGIC_STRING_TRIGGER_REDACTED_THINKING_46C9A13E193C177646C7398A98432ECCCE4C1253D5E2D82641AC0E52CC2876CB';

type Block = Exclude<AnthropicMessage['content'], string>[number];

/** Claude's limit on cache_control blocks per request. */
const MAX_BREAKPOINTS = 4;

/** The prompt in Claude's cache order, each piece marked when it carries a cache_control breakpoint. */
function segments(req: MessagesRequest): CacheSegment[] {
  const seg = (v: unknown): CacheSegment => {
    const control =
      v && typeof v === 'object'
        ? (v as { cache_control?: { ttl?: string } | null }).cache_control
        : undefined;
    return {
      json: JSON.stringify(v),
      breakpoint: !!control,
      ...(control?.ttl === '1h' ? { ttl: '1h' as const } : {}),
    };
  };
  const out = (req.tools ?? []).map(seg);
  if (typeof req.system === 'string') out.push(seg(req.system));
  else for (const b of req.system ?? []) out.push(seg(b));
  for (const m of req.messages)
    if (typeof m.content === 'string') out.push(seg(m.content));
    else for (const b of m.content) out.push(seg(b));
  return out;
}

const betas = (ex: Exchange): string[] => {
  const h = ex.req.headers['anthropic-beta'];
  return (Array.isArray(h) ? h.join(',') : (h ?? '')).split(',').map((b) => b.trim());
};
const hasBeta = (ex: Exchange, prefix: string) => betas(ex).some((b) => b.startsWith(prefix));

/**
 * Claude's own checks: beta-gated fields, the thinking budget below max_tokens, thinking blocks
 * sent back unchanged (their signature verifies), and, with thinking on, the assistant turn of a
 * tool-use loop starting with its thinking block. The message of the first failure, or undefined.
 */
function refusal(ex: Exchange, req: MessagesRequest): string | undefined {
  const marks = segments(req).filter((s) => s.breakpoint);
  if (marks.length > MAX_BREAKPOINTS)
    return `A maximum of ${MAX_BREAKPOINTS} blocks with cache_control may be provided. Found ${marks.length}.`;
  const firstShort = marks.findIndex((s) => s.ttl !== '1h');
  if (firstShort !== -1 && marks.slice(firstShort).some((s) => s.ttl === '1h'))
    return "a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block. Note that blocks are processed in the following order: `tools`, `system`, `messages`.";
  // The older mid-conversation-system beta and its successor, mid-conversation-tool-changes.
  if (
    req.messages.some((m) => m.role === 'system') &&
    !hasBeta(ex, 'mid-conversation-system-') &&
    !hasBeta(ex, 'mid-conversation-tool-changes-')
  )
    return 'messages: system turns need the mid-conversation-system beta';
  if (
    (req.tools ?? []).some((t) => (t as { defer_loading?: boolean }).defer_loading) &&
    !hasBeta(ex, 'advanced-tool-use-')
  )
    return 'tools.defer_loading: Extra inputs are not permitted';
  if (req.context_management && !hasBeta(ex, 'context-management-'))
    return 'context_management: Extra inputs are not permitted';
  if (req.thinking?.type === 'enabled' && req.thinking.budget_tokens >= req.max_tokens)
    return '`max_tokens` must be greater than `thinking.budget_tokens`';
  for (const [i, m] of req.messages.entries()) {
    if (typeof m.content === 'string') continue;
    for (const [j, b] of m.content.entries()) {
      if (b.type === 'thinking' && !ex.claude.verify(b.thinking, b.signature))
        return `messages.${i}.content.${j}: Invalid \`signature\` in \`thinking\` block`;
      if (b.type === 'redacted_thinking' && !ex.claude.verifyRedacted(b.data))
        return `messages.${i}.content.${j}: Invalid \`data\` in \`redacted_thinking\` block`;
    }
  }
  const thinking = req.thinking && req.thinking.type !== 'disabled';
  if (thinking && lastIsToolResult(req.messages)) {
    const i = req.messages.length - 2;
    const turn = req.messages[i];
    const first =
      turn && typeof turn.content !== 'string' ? (turn.content[0] as Block | undefined) : undefined;
    if (
      turn?.role === 'assistant' &&
      first &&
      first.type !== 'thinking' &&
      first.type !== 'redacted_thinking'
    )
      return `messages.${i}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first.type}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block.`;
  }
  return undefined;
}

/** Thinking first when it is on (adaptive thinks too): a redacted block for the trigger string. */
function thinkingBlocks(ex: Exchange, req: MessagesRequest, userText: string): ContentOut[] {
  if (!req.thinking || req.thinking.type === 'disabled') return [];
  if (userText.includes(REDACTED_THINKING_TRIGGER))
    return [{ type: 'redacted_thinking', data: ex.claude.redacted() }];
  const thinking = `Simulated reasoning of ${ex.provider}/${ex.model} about: ${userText.slice(0, 40)}`;
  return [{ type: 'thinking', thinking, signature: ex.claude.sign(thinking) }];
}

export function decideMessage(ex: Exchange, req: MessagesRequest, minChars: number): MessageOutcome {
  const userText = lastUserText(req.messages);
  const prompt = systemText(req.system) + req.messages.map((m) => blocksText(m.content, true)).join(' ');
  const cache = ex.claude.cache(ex.model, segments(req));
  const total = tokens(prompt);
  const thinking = thinkingBlocks(ex, req, userText);
  const thought = thinking.reduce((n, b) => n + (b.type === 'thinking' ? tokens(b.thinking) : 8), 0);
  const base = {
    id: newId('msg_'),
    model: ex.model,
    inputTokens: Math.max(1, total - cache.read - cache.written),
    cacheCreationTokens: cache.written,
    cacheCreation1hTokens: cache.written1h,
    cacheReadTokens: cache.read,
  };
  const tools = (req.tools ?? [])
    .filter((t): t is typeof t & { input_schema: object } => 'input_schema' in t)
    .map((t) => ({ name: t.name, schema: t.input_schema }));
  const call = planToolCall(
    tools,
    toolMode(req),
    lastIsToolResult(req.messages),
    userText,
    ex.fault.toolCall,
  );
  if (call) {
    return {
      ...base,
      blocks: [
        ...thinking,
        {
          type: 'tool_use',
          id: newId('toolu_'),
          name: call.name,
          input: call.args,
          caller: { type: 'direct' },
        },
      ],
      stopReason: 'tool_use',
      stopSequence: null,
      outputTokens: thought + tokens(call.name + JSON.stringify(call.args)),
    };
  }
  const limited = applyLimits(
    replyText(ex.provider, ex.model, userText, minChars),
    req.max_tokens,
    req.stop_sequences ?? [],
  );
  return {
    ...base,
    blocks: [...thinking, { type: 'text', text: limited.text }],
    stopReason:
      limited.reason === 'length'
        ? 'max_tokens'
        : limited.reason === 'stop_sequence'
          ? 'stop_sequence'
          : 'end_turn',
    stopSequence: limited.stopSequence,
    outputTokens: thought + tokens(limited.text),
  };
}

export async function handleMessages(ex: Exchange): Promise<void> {
  const req = ex.body as MessagesRequest;
  const refused = refusal(ex, req);
  if (refused) return sendError(ex, anthropicError(400, 'invalid_request_error', refused));
  if (req.stream)
    return writeStream(ex, messageFrames(decideMessage(ex, req, ex.streamChunks), ex.streamChunks));
  const o = decideMessage(ex, req, 0);
  return sendJson(ex, 200, {
    id: o.id,
    type: 'message',
    role: 'assistant',
    model: o.model,
    content: o.blocks,
    stop_reason: o.stopReason,
    stop_sequence: o.stopSequence,
    usage: usageOf(o),
  });
}
