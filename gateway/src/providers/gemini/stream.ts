/** Gemini streamGenerateContent?alt=sse → canonical stream events. */
import { errorEventData, isErrorEvent, type SseEvent } from '../../upstream/sse.ts';
import { isObject, parseEventJson, type StreamMapper } from '../common.ts';
import type { StreamEvent } from '../types.ts';
import { geminiStreamError } from './errors.ts';
import {
  type GeminiResponse,
  type GeminiUsage,
  mapFinishReason,
  normaliseGeminiUsage,
  toolCallId,
} from './response.ts';

export class GeminiStreamMapper implements StreamMapper {
  private finished = false;
  private toolCalls = 0;
  private responseId: string | undefined;
  /** usageMetadata is cumulative; the last one seen is reported once, after the finish event. */
  private usage: GeminiUsage | undefined;

  onEvent(ev: SseEvent, out: StreamEvent[]): void {
    if (isErrorEvent(ev)) throw geminiStreamError(errorEventData(ev));
    const raw = parseEventJson(ev.data);
    if (!isObject(raw)) return;
    if (raw.error != null) throw geminiStreamError(raw);
    const chunk = raw as GeminiResponse;
    if (chunk.usageMetadata) this.usage = chunk.usageMetadata;
    this.responseId ??= chunk.responseId;
    const candidate = chunk.candidates?.[0];
    if (!candidate) {
      if (chunk.promptFeedback?.blockReason && !this.finished) {
        this.finished = true;
        out.push({ type: 'finish', finish_reason: 'content_filter' });
      }
      return;
    }
    let text: string | undefined;
    let calls: { index: number; id: string; name: string; arguments: string }[] | undefined;
    for (const part of candidate.content?.parts ?? []) {
      if (part.thought) continue;
      if (typeof part.text === 'string' && part.text.length > 0) {
        text = text === undefined ? part.text : text + part.text;
      } else if (part.functionCall) {
        const index = this.toolCalls++;
        calls ??= [];
        calls.push({
          index,
          id: toolCallId(part.functionCall, this.responseId, index),
          name: part.functionCall.name ?? '',
          arguments: JSON.stringify(part.functionCall.args ?? {}),
        });
      }
    }
    if (text !== undefined || calls !== undefined) {
      const delta: StreamEvent = { type: 'delta' };
      if (text !== undefined) delta.content = text;
      if (calls !== undefined) delta.tool_calls = calls;
      out.push(delta);
    }
    if (candidate.finishReason && !this.finished) {
      this.finished = true;
      out.push({
        type: 'finish',
        finish_reason: mapFinishReason(candidate.finishReason, this.toolCalls > 0),
      });
    }
  }

  /** Gemini has no terminal event: the stream is complete once a finishReason arrived. */
  end(out: StreamEvent[]): boolean {
    if (this.usage) out.push({ type: 'usage', usage: normaliseGeminiUsage(this.usage) });
    return this.finished;
  }
}
