/** OpenAI-style SSE chunks → canonical stream events. */
import { errorEventData, isErrorEvent, type SseEvent } from '../../upstream/sse.ts';
import { isObject, parseEventJson, type StreamMapper } from '../common.ts';
import type { StreamEvent } from '../types.ts';
import { openaiStreamError } from './errors.ts';
import { normaliseOpenAIUsage } from './response.ts';

interface ChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}
interface Chunk {
  choices?: {
    index?: number;
    delta?: { content?: string | null; tool_calls?: ChunkToolCall[] | null; refusal?: string | null };
    text?: string;
    finish_reason?: string | null;
  }[];
  usage?: unknown;
  x_groq?: { usage?: unknown };
  error?: unknown;
}

export class OpenAIStreamMapper implements StreamMapper {
  private done = false;
  private finished = false;
  private usageSent = false;

  onEvent(ev: SseEvent, out: StreamEvent[]): void {
    const data = ev.data;
    if (data === '[DONE]') {
      this.done = true;
      return;
    }
    if (this.done) return;
    if (isErrorEvent(ev)) throw openaiStreamError(errorEventData(ev));
    const raw = parseEventJson(data);
    if (!isObject(raw)) return;
    const chunk = raw as Chunk;
    if (chunk.error != null) throw openaiStreamError(chunk);
    const choice = chunk.choices?.[0];
    if (choice) {
      const delta = choice.delta;
      const content = delta ? (delta.content ?? delta.refusal) : choice.text;
      const tcs = delta?.tool_calls;
      if ((typeof content === 'string' && content.length > 0) || (tcs && tcs.length > 0)) {
        const ev: StreamEvent = { type: 'delta' };
        if (typeof content === 'string' && content.length > 0) ev.content = content;
        if (tcs && tcs.length > 0) {
          ev.tool_calls = tcs.map((tc, i) => {
            const d: { index: number; id?: string; name?: string; arguments?: string } = {
              index: tc.index ?? i,
            };
            if (tc.id) d.id = tc.id;
            if (tc.function?.name) d.name = tc.function.name;
            if (tc.function?.arguments) d.arguments = tc.function.arguments;
            return d;
          });
        }
        out.push(ev);
      }
      if (choice.finish_reason) {
        this.finished = true;
        out.push({ type: 'finish', finish_reason: choice.finish_reason });
      }
    }
    const usage = chunk.usage ?? chunk.x_groq?.usage;
    if (isObject(usage) && !this.usageSent) {
      this.usageSent = true;
      out.push({ type: 'usage', usage: normaliseOpenAIUsage(usage) });
    }
  }

  /** Complete when `[DONE]` arrived; a finish_reason without `[DONE]` is tolerated (nothing was lost). */
  end(): boolean {
    return this.done || this.finished;
  }
}
