/**
 * POST /v1/messages: decides the outcome once (tool_use per toolcall.ts, else the deterministic text cut by
 * stop_sequences and max_tokens), then renders it as a message object or as the SSE event sequence.
 */
import type { Exchange } from '../exchange.ts';
import { applyLimits, newId, replyText, tokens } from '../generate.ts';
import { sendJson } from '../respond.ts';
import { writeStream } from '../sse.ts';
import { planToolCall, type ToolMode } from '../toolcall.ts';
import type { AnthropicMessage, MessagesRequest } from './schemas.ts';
import { type MessageOutcome, usageOf } from './shapes.ts';
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

export function decideMessage(ex: Exchange, req: MessagesRequest, minChars: number): MessageOutcome {
  const userText = lastUserText(req.messages);
  const prompt = systemText(req.system) + req.messages.map((m) => blocksText(m.content, true)).join(' ');
  const base = { id: newId('msg_'), model: ex.model, inputTokens: tokens(prompt) };
  const tools = (req.tools ?? [])
    .filter((t): t is typeof t & { input_schema: object } => 'input_schema' in t)
    .map((t) => ({ name: t.name, schema: t.input_schema }));
  const call = planToolCall(tools, toolMode(req), lastIsToolResult(req.messages), userText);
  if (call) {
    return {
      ...base,
      block: { type: 'tool_use', id: newId('toolu_'), name: call.name, input: call.args },
      stopReason: 'tool_use',
      stopSequence: null,
      outputTokens: tokens(call.name + JSON.stringify(call.args)),
    };
  }
  const limited = applyLimits(
    replyText(ex.provider, ex.model, userText, minChars),
    req.max_tokens,
    req.stop_sequences ?? [],
  );
  return {
    ...base,
    block: { type: 'text', text: limited.text },
    stopReason:
      limited.reason === 'length'
        ? 'max_tokens'
        : limited.reason === 'stop_sequence'
          ? 'stop_sequence'
          : 'end_turn',
    stopSequence: limited.stopSequence,
    outputTokens: tokens(limited.text),
  };
}

export async function handleMessages(ex: Exchange): Promise<void> {
  const req = ex.body as MessagesRequest;
  if (req.stream)
    return writeStream(ex, messageFrames(decideMessage(ex, req, ex.streamChunks), ex.streamChunks));
  const o = decideMessage(ex, req, 0);
  return sendJson(ex, 200, {
    id: o.id,
    type: 'message',
    role: 'assistant',
    model: o.model,
    content: [o.block],
    stop_reason: o.stopReason,
    stop_sequence: o.stopSequence,
    usage: usageOf(o),
  });
}
