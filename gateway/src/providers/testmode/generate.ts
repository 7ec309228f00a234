import { createHash } from 'node:crypto';
import { sampleFromSchema } from '../../structured/sample.ts';
import type { ChatMessage, ChatRequest, ToolCall, Usage } from '../types.ts';

/** Rough token count (about four characters per token), good enough for usage and spend figures. */
export const approxTokens = (text: string): number => (text.length === 0 ? 0 : Math.ceil(text.length / 4));

export const digest = (text: string): Buffer => createHash('sha256').update(text).digest();

export function textOf(content: ChatMessage['content']): string {
  if (content === null) return '';
  if (typeof content === 'string') return content;
  return content.map((p) => (p.type === 'text' ? p.text : '[image]')).join(' ');
}

export function lastUserText(messages: readonly ChatMessage[]): string {
  for (let i = messages.length - 1; i >= 0; i--)
    if (messages[i]!.role === 'user') return textOf(messages[i]!.content);
  return '';
}

export function usageOf(promptText: string, completionText: string): Usage {
  const prompt_tokens = approxTokens(promptText);
  const completion_tokens = approxTokens(completionText);
  return { prompt_tokens, completion_tokens, total_tokens: prompt_tokens + completion_tokens };
}

export interface GeneratedChat {
  content: string | null;
  toolCalls: ToolCall[] | undefined;
  finishReason: string;
  usage: Usage;
}

/**
 * Deterministic answers: the same request always gives the same reply, so tests and demos are
 * repeatable. Structured output is sampled from the schema; a tool is called when tools are
 * offered, tool_choice is not "none" and the last message is not a tool result (then it answers).
 */
export function generateChat(req: ChatRequest, model: string): GeneratedChat {
  const promptText = req.messages.map((m) => textOf(m.content)).join('\n');
  const seed = digest(promptText).toString('hex').slice(0, 16);
  const tools = req.tools ?? [];
  // After a tool result a model answers: an agent loop gets its final text instead of another call.
  const afterTool = req.messages[req.messages.length - 1]?.role === 'tool';
  if (tools.length && req.tool_choice !== 'none' && !afterTool) {
    const named = typeof req.tool_choice === 'object' ? req.tool_choice.function.name : undefined;
    const tool = tools.find((t) => t.function.name === named) ?? tools[0]!;
    const args = JSON.stringify(
      tool.function.parameters ? sampleFromSchema(tool.function.parameters, seed) : {},
    );
    return {
      content: null,
      toolCalls: [
        { id: `call_${seed}`, type: 'function', function: { name: tool.function.name, arguments: args } },
      ],
      finishReason: 'tool_calls',
      usage: usageOf(promptText, args),
    };
  }
  let content: string;
  if (req.structured) content = JSON.stringify(sampleFromSchema(req.structured.schema, seed));
  else if (req.json) content = JSON.stringify({ reply: `Test-mode answer from ${model}.` });
  else if (afterTool) {
    const result = textOf(req.messages[req.messages.length - 1]!.content)
      .replace(/\s+/g, ' ')
      .trim()
      .slice(0, 80);
    content = `This is a test-mode answer from ${model} using the tool result: "${result}". No provider was called.`;
  } else {
    const asked = lastUserText(req.messages).replace(/\s+/g, ' ').trim().slice(0, 80);
    content = `This is a test-mode answer from ${model}${asked ? ` to: "${asked}"` : ''}. No provider was called.`;
  }
  if (
    req.max_tokens !== undefined &&
    approxTokens(content) > req.max_tokens &&
    !req.structured &&
    !req.json
  ) {
    content = content.slice(0, req.max_tokens * 4);
    return { content, toolCalls: undefined, finishReason: 'length', usage: usageOf(promptText, content) };
  }
  return { content, toolCalls: undefined, finishReason: 'stop', usage: usageOf(promptText, content) };
}

/** Unit vector of `dims` numbers derived from the text's hash. */
export function embeddingOf(text: string, dims: number): number[] {
  const out: number[] = [];
  let block = digest(text);
  for (let i = 0; out.length < dims; i++) {
    if (i > 0 && i % 16 === 0) block = digest(block.toString('hex'));
    out.push(block.readUInt16BE((i % 16) * 2) / 32768 - 1);
  }
  const norm = Math.sqrt(out.reduce((s, v) => s + v * v, 0)) || 1;
  return out.map((v) => Math.round((v / norm) * 1e6) / 1e6);
}

/** A valid 1×1 PNG, so test-mode images render anywhere. */
export const PIXEL_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==';

/** 0.1 s of 16 kHz mono 16-bit silence as WAV. */
export function silentWav(): Uint8Array {
  const samples = 1600;
  const buf = Buffer.alloc(44 + samples * 2);
  buf.write('RIFF', 0);
  buf.writeUInt32LE(36 + samples * 2, 4);
  buf.write('WAVEfmt ', 8);
  buf.writeUInt32LE(16, 16);
  buf.writeUInt16LE(1, 20);
  buf.writeUInt16LE(1, 22);
  buf.writeUInt32LE(16000, 24);
  buf.writeUInt32LE(32000, 28);
  buf.writeUInt16LE(2, 32);
  buf.writeUInt16LE(16, 34);
  buf.write('data', 36);
  buf.writeUInt32LE(samples * 2, 40);
  return buf;
}
