/**
 * Cohere v2 chat stream (`event: <type>` + JSON data): message-start, content-start/-delta/-end,
 * tool-plan-delta, tool-call-start/-delta/-end, citation events, and message-end with the finish
 * reason and usage, which is the terminal event.
 */
import { errorEventData, isErrorEvent, type SseEvent } from '../../upstream/sse.ts';
import { isObject, parseEventJson, type StreamMapper } from '../common.ts';
import type { StreamEvent } from '../types.ts';
import { cohereStreamError } from './errors.ts';
import { type CohereUsage, cohereStopSequence, mapFinishReason, normaliseCohereUsage } from './response.ts';

interface CohereEvent {
  type?: string;
  index?: number;
  delta?: {
    message?: {
      content?: { text?: string };
      tool_calls?: { id?: string; function?: { name?: string; arguments?: string } };
    };
    finish_reason?: string;
    usage?: CohereUsage;
    error?: string;
  };
}

export class CohereStreamMapper implements StreamMapper {
  private ended = false;
  private toolIndex = new Map<number, number>();

  onEvent(ev: SseEvent, out: StreamEvent[]): void {
    if (isErrorEvent(ev)) throw cohereStreamError(errorEventData(ev));
    const raw = parseEventJson(ev.data);
    if (!isObject(raw)) return;
    const e = raw as CohereEvent;
    switch (e.type ?? ev.event) {
      case 'content-delta': {
        const text = e.delta?.message?.content?.text;
        if (text) out.push({ type: 'delta', content: text });
        return;
      }
      case 'tool-call-start': {
        const tc = e.delta?.message?.tool_calls;
        const index = this.toolIndex.size;
        this.toolIndex.set(e.index ?? index, index);
        out.push({
          type: 'delta',
          tool_calls: [
            {
              index,
              id: tc?.id ?? `call_${index}`,
              name: tc?.function?.name ?? '',
              arguments: tc?.function?.arguments ?? '',
            },
          ],
        });
        return;
      }
      case 'tool-call-delta': {
        const args = e.delta?.message?.tool_calls?.function?.arguments;
        const index = this.toolIndex.get(e.index ?? 0);
        if (args && index !== undefined)
          out.push({ type: 'delta', tool_calls: [{ index, arguments: args }] });
        return;
      }
      case 'message-end': {
        const reason = e.delta?.finish_reason;
        if (reason === 'ERROR' || reason === 'TIMEOUT')
          throw cohereStreamError({
            message: e.delta?.error ?? `the model stopped with ${reason}`,
            status: reason === 'TIMEOUT' ? 504 : 500,
          });
        this.ended = true;
        out.push({ type: 'finish', finish_reason: mapFinishReason(reason), ...cohereStopSequence(reason) });
        if (e.delta?.usage) out.push({ type: 'usage', usage: normaliseCohereUsage(e.delta.usage) });
        return;
      }
      default:
        // message-start, content-start/-end, tool-plan-delta, tool-call-end, citations
        return;
    }
  }

  end(): boolean {
    return this.ended;
  }
}
