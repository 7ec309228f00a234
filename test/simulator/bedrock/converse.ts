/**
 * POST /model/{id}/converse and /converse-stream. The outcome is decided once (a toolUse per
 * toolcall.ts, else the deterministic reply cut by stopSequences and maxTokens), then rendered as a
 * Converse answer or as the ConverseStream event frames: messageStart, [contentBlockStart for a
 * tool], contentBlockDelta…, contentBlockStop, messageStop, metadata. Like Bedrock, every event
 * payload carries a `p` padding field.
 */

import type { CacheSegment } from '../anthropic/claude-state.ts';
import type { Exchange } from '../exchange.ts';
import { applyLimits, replyText, splitChunks, tokens } from '../generate.ts';
import { sendError, sendJson } from '../respond.ts';
import { type Frame, writeStream } from '../sse.ts';
import { planToolCall, type ToolMode } from '../toolcall.ts';
import { bedrockError } from './errors.ts';
import { eventFrame } from './eventstream.ts';
import type { CachePoint, ConverseMessage, ConverseRequest } from './schemas.ts';

interface Outcome {
  text?: string;
  tool?: { toolUseId: string; name: string; input: unknown };
  stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'stop_sequence';
  /** Every input token, cache reads and writes included. */
  inputTokens: number;
  outputTokens: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Of cacheWrite, the tokens a one-hour checkpoint wrote. */
  cacheWrite1h?: number;
}

/** The models that take cache checkpoints (Claude and Nova); others ignore them here. */
const caches = (model: string) => model.includes('anthropic.claude') || model.includes('amazon.nova');

/**
 * The prompt in cache order (tools, system, then each message's blocks), a checkpoint marking the
 * segment before it, for the prefix cache Claude keeps (claude-state.ts) under this model's name.
 */
function segments(req: ConverseRequest): CacheSegment[] {
  const out: CacheSegment[] = [];
  const add = (v: { cachePoint?: CachePoint | undefined }) => {
    const last = out[out.length - 1];
    if (!v.cachePoint) out.push({ json: JSON.stringify(v), breakpoint: false });
    else if (last) {
      last.breakpoint = true;
      if (v.cachePoint.ttl === '1h') last.ttl = '1h';
    }
  };
  for (const t of req.toolConfig?.tools ?? []) add(t);
  for (const b of req.system ?? []) add(b);
  for (const m of req.messages) for (const b of m.content) add(b);
  return out;
}

/** Cache reads and writes: from the request's checkpoints, else as a fault rule sets them. */
function cacheUse(ex: Exchange, req: ConverseRequest, inputTokens: number) {
  const segs = caches(ex.model) ? segments(req) : [];
  if (segs.some((s) => s.breakpoint)) {
    const use = ex.claude.cache(ex.model, segs);
    return { cacheRead: use.read, cacheWrite: use.written, cacheWrite1h: use.written1h };
  }
  const cacheRead = Math.min(ex.fault.cachedTokens ?? 0, inputTokens);
  return { cacheRead, cacheWrite: Math.min(ex.fault.cacheWriteTokens ?? 0, inputTokens - cacheRead) };
}

const blockText = (b: ConverseMessage['content'][number], all: boolean): string =>
  typeof b.text === 'string'
    ? b.text
    : all && b.toolUse
      ? JSON.stringify(b.toolUse.input)
      : all && b.toolResult
        ? JSON.stringify(b.toolResult.content)
        : '';

function lastUserText(messages: ConverseMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== 'user') continue;
    const text = m.content
      .map((b) => blockText(b, false))
      .join(' ')
      .trim();
    if (text) return text;
  }
  return '';
}

function toolMode(req: ConverseRequest): ToolMode {
  const c = req.toolConfig?.toolChoice as
    | { auto?: unknown; any?: unknown; tool?: { name: string } }
    | undefined;
  if (!c || c.auto) return { mode: 'auto' };
  if (c.any) return { mode: 'required' };
  return c.tool ? { mode: 'named', name: c.tool.name } : { mode: 'auto' };
}

/** The checks Bedrock makes beyond the schema; a message, or undefined when the request is fine. */
function invalid(req: ConverseRequest): string | undefined {
  if (req.messages[0]?.role !== 'user')
    return 'A conversation must start with a user message. Try again with a conversation that starts with a user message.';
  for (let i = 1; i < req.messages.length; i++)
    if (req.messages[i]!.role === req.messages[i - 1]!.role)
      return 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.';
  const toolBlocks = req.messages.some((m) => m.content.some((b) => b.toolUse || b.toolResult));
  if (toolBlocks && !req.toolConfig)
    return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.';
  const points = [
    ...(req.toolConfig?.tools ?? []),
    ...(req.system ?? []),
    ...req.messages.flatMap((m) => m.content),
  ].filter((b) => b.cachePoint).length;
  // Claude's limit of four breakpoints, as checkpoints.
  if (points > 4) return `The request has ${points} cache checkpoints; at most 4 are allowed.`;
  return undefined;
}

function decide(ex: Exchange, req: ConverseRequest, minChars: number): Outcome {
  const userText = lastUserText(req.messages);
  const prompt =
    (req.system ?? []).map((s) => s.text ?? '').join(' ') +
    req.messages.map((m) => m.content.map((b) => blockText(b, true)).join(' ')).join(' ');
  const cache = cacheUse(ex, req, tokens(prompt));
  // Every input token: at least what the cache read and wrote, and one more it did not cover.
  const inputTokens = Math.max(tokens(prompt), cache.cacheRead + cache.cacheWrite + 1);
  const tools = (req.toolConfig?.tools ?? []).flatMap((t) =>
    t.toolSpec ? [{ name: t.toolSpec.name, schema: t.toolSpec.inputSchema.json }] : [],
  );
  const last = req.messages[req.messages.length - 1];
  const lastIsToolResult = !!last?.content.some((b) => b.toolResult);
  const call = planToolCall(tools, toolMode(req), lastIsToolResult, userText, ex.fault.toolCall);
  if (call)
    return {
      tool: {
        toolUseId: `tooluse_sim${tokens(call.name + userText)}${Date.now() % 100000}`,
        name: call.name,
        input: call.args,
      },
      stopReason: 'tool_use',
      inputTokens,
      ...cache,
      outputTokens: tokens(call.name + JSON.stringify(call.args)),
    };
  const cfg = req.inferenceConfig;
  const limited = applyLimits(
    replyText(ex.provider, ex.model, userText, minChars),
    cfg?.maxTokens,
    cfg?.stopSequences ?? [],
  );
  return {
    text: limited.text,
    stopReason:
      limited.reason === 'length'
        ? 'max_tokens'
        : limited.reason === 'stop_sequence'
          ? 'stop_sequence'
          : 'end_turn',
    inputTokens,
    ...cache,
    outputTokens: tokens(limited.text),
  };
}

/** Converse reports cache reads and writes apart: inputTokens is what the cache did not cover. */
function usage(o: Outcome) {
  const read = o.cacheRead ?? 0;
  const write = o.cacheWrite ?? 0;
  return {
    inputTokens: o.inputTokens - read - write,
    outputTokens: o.outputTokens,
    totalTokens: o.inputTokens + o.outputTokens,
    ...(read > 0 ? { cacheReadInputTokens: read } : {}),
    ...(write > 0 ? { cacheWriteInputTokens: write } : {}),
    ...(write > 0 ? { cacheDetails: cacheDetails(write, o.cacheWrite1h ?? 0) } : {}),
  };
}

/** The writes by lifetime, as Converse lists them: the hour first, entries with tokens only. */
function cacheDetails(write: number, hour: number) {
  return [
    ...(hour > 0 ? [{ ttl: '1h', inputTokens: hour }] : []),
    ...(write - hour > 0 ? [{ ttl: '5m', inputTokens: write - hour }] : []),
  ];
}
const PAD = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ';
const padded = (value: Record<string, unknown>) => ({
  ...value,
  p: PAD.slice(0, 1 + (JSON.stringify(value).length % PAD.length)),
});

export async function handleConverse(ex: Exchange): Promise<void> {
  const req = ex.body as ConverseRequest;
  const problem = invalid(req);
  if (problem) return sendError(ex, bedrockError(400, 'ValidationException', problem));
  const o = decide(ex, req, 0);
  const content = o.tool ? [{ toolUse: o.tool }] : [{ text: o.text }];
  return sendJson(ex, 200, {
    output: { message: { role: 'assistant', content } },
    stopReason: o.stopReason,
    usage: usage(o),
    metrics: { latencyMs: 42 },
  });
}

export async function handleConverseStream(ex: Exchange): Promise<void> {
  const req = ex.body as ConverseRequest;
  const problem = invalid(req);
  if (problem) return sendError(ex, bedrockError(400, 'ValidationException', problem));
  const o = decide(ex, req, ex.streamChunks);
  const frame = (event: string, value: Record<string, unknown>, paced = false): Frame => ({
    prefix: event,
    json: JSON.stringify(padded(value)),
    suffix: '',
    paced,
  });
  const frames: Frame[] = [frame('messageStart', { role: 'assistant' })];
  if (o.tool) {
    frames.push(
      frame('contentBlockStart', {
        contentBlockIndex: 0,
        start: { toolUse: { toolUseId: o.tool.toolUseId, name: o.tool.name } },
      }),
    );
    const args = JSON.stringify(o.tool.input);
    for (const piece of splitChunks(args, Math.min(3, ex.streamChunks)))
      frames.push(
        frame('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: piece } } }, true),
      );
  } else {
    for (const piece of splitChunks(o.text ?? '', ex.streamChunks))
      frames.push(frame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: piece } }, true));
  }
  frames.push(frame('contentBlockStop', { contentBlockIndex: 0 }));
  frames.push(frame('messageStop', { stopReason: o.stopReason }));
  frames.push(frame('metadata', { usage: usage(o), metrics: { latencyMs: 42 } }));
  // A corrupt CRC lands on the middle content frame, after the client has had content.
  const bad = ex.fault.corruptCrc ? Math.floor(frames.length / 2) : -1;
  return writeStream(ex, frames, 'application/vnd.amazon.eventstream', (f, i) =>
    eventFrame(f.prefix, f.json, i === bad),
  );
}
