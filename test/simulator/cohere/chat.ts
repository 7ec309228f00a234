/**
 * POST /v2/chat: tool calls per toolcall.ts (tool_choice REQUIRED forces the first tool, NONE none),
 * JSON output sampled from response_format.json_schema, else the deterministic reply cut by
 * stop_sequences and max_tokens. Streams: message-start, content-start, content-delta…,
 * content-end (or tool-plan-delta, tool-call-start/-delta/-end), message-end with finish_reason
 * and usage; each `event: <type>` with the type repeated in the JSON.
 */
import type { Exchange } from '../exchange.ts';
import { applyLimits, newId, replyText, splitChunks, tokens } from '../generate.ts';
import { sendJson } from '../respond.ts';
import { fakeFromSchema } from '../schema-sample.ts';
import { eventFrame, type Frame, writeStream } from '../sse.ts';
import { planToolCall, type ToolMode } from '../toolcall.ts';
import type { ChatRequest, CohereMessage } from './schemas.ts';

interface Outcome {
  id: string;
  text?: string;
  tool?: { id: string; name: string; arguments: string };
  finish: 'COMPLETE' | 'MAX_TOKENS' | 'STOP_SEQUENCE' | 'TOOL_CALL';
  input: number;
  output: number;
}

const textOf = (c: CohereMessage['content']): string =>
  c === undefined
    ? ''
    : typeof c === 'string'
      ? c
      : c.map((p) => (p.type === 'text' ? p.text : '')).join(' ');

function decide(ex: Exchange, req: ChatRequest, minChars: number): Outcome {
  let userText = '';
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === 'user' && textOf(m.content)) {
      userText = textOf(m.content);
      break;
    }
  }
  const input = tokens(req.messages.map((m) => textOf(m.content)).join(' '));
  const base = { id: newId(''), input };
  const mode: ToolMode =
    req.tool_choice === 'NONE'
      ? { mode: 'none' }
      : req.tool_choice === 'REQUIRED'
        ? { mode: 'required' }
        : { mode: 'auto' };
  const tools = (req.tools ?? []).map((t) => ({ name: t.function.name, schema: t.function.parameters }));
  const lastIsTool = req.messages[req.messages.length - 1]?.role === 'tool';
  const call = planToolCall(tools, mode, lastIsTool, userText);
  if (call) {
    const args = JSON.stringify(call.args);
    return {
      ...base,
      tool: { id: newId(`${call.name}_`), name: call.name, arguments: args },
      finish: 'TOOL_CALL',
      output: tokens(call.name + args),
    };
  }
  const text = replyText(ex.provider, ex.model, userText, minChars);
  if (req.response_format?.type === 'json_object') {
    const schema = 'json_schema' in req.response_format ? req.response_format.json_schema : undefined;
    const json = JSON.stringify(schema === undefined ? { reply: text } : fakeFromSchema(schema, userText));
    return { ...base, text: json, finish: 'COMPLETE', output: tokens(json) };
  }
  const limited = applyLimits(text, req.max_tokens, req.stop_sequences ?? []);
  return {
    ...base,
    text: limited.text,
    finish:
      limited.reason === 'length'
        ? 'MAX_TOKENS'
        : limited.reason === 'stop_sequence'
          ? 'STOP_SEQUENCE'
          : 'COMPLETE',
    output: tokens(limited.text),
  };
}

/** `tokens` includes Cohere's prompt template, so it is larger than what is billed. */
const usage = (o: Outcome) => ({
  billed_units: { input_tokens: o.input, output_tokens: o.output },
  tokens: { input_tokens: o.input + 180, output_tokens: o.output },
});

export async function handleChat(ex: Exchange): Promise<void> {
  const req = ex.body as ChatRequest;
  if (req.stream) return stream(ex, req);
  const o = decide(ex, req, 0);
  const message: Record<string, unknown> = { role: 'assistant' };
  if (o.tool) {
    message.tool_plan = `I will call ${o.tool.name}.`;
    message.tool_calls = [
      { id: o.tool.id, type: 'function', function: { name: o.tool.name, arguments: o.tool.arguments } },
    ];
  } else message.content = [{ type: 'text', text: o.text }];
  return sendJson(ex, 200, { id: o.id, message, finish_reason: o.finish, usage: usage(o) });
}

function stream(ex: Exchange, req: ChatRequest): Promise<void> {
  const o = decide(ex, req, ex.streamChunks);
  const ev = (type: string, value: Record<string, unknown>, paced = false): Frame =>
    eventFrame(type, { type, ...value }, paced);
  const frames: Frame[] = [
    ev('message-start', {
      id: o.id,
      delta: { message: { role: 'assistant', content: [], tool_plan: '', tool_calls: [], citations: [] } },
    }),
  ];
  if (o.tool) {
    frames.push(ev('tool-plan-delta', { delta: { message: { tool_plan: `I will call ${o.tool.name}.` } } }));
    frames.push(
      ev('tool-call-start', {
        index: 0,
        delta: {
          message: {
            tool_calls: { id: o.tool.id, type: 'function', function: { name: o.tool.name, arguments: '' } },
          },
        },
      }),
    );
    for (const piece of splitChunks(o.tool.arguments, Math.min(3, ex.streamChunks)))
      frames.push(
        ev(
          'tool-call-delta',
          { index: 0, delta: { message: { tool_calls: { function: { arguments: piece } } } } },
          true,
        ),
      );
    frames.push(ev('tool-call-end', { index: 0 }));
  } else {
    frames.push(
      ev('content-start', { index: 0, delta: { message: { content: { type: 'text', text: '' } } } }),
    );
    for (const piece of splitChunks(o.text ?? '', ex.streamChunks))
      frames.push(ev('content-delta', { index: 0, delta: { message: { content: { text: piece } } } }, true));
    frames.push(ev('content-end', { index: 0 }));
  }
  frames.push(ev('message-end', { delta: { finish_reason: o.finish, usage: usage(o) } }));
  return writeStream(ex, frames);
}
