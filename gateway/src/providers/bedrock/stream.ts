/** ConverseStream events (already unframed, see eventstream.ts) → canonical stream events. */
import { errorEventData, isErrorEvent, type SseEvent } from '../../upstream/sse.ts';
import { isObject, parseEventJson, type StreamMapper } from '../common.ts';
import type { StreamEvent } from '../types.ts';
import { bedrockStreamError } from './errors.ts';
import {
  type ConverseUsage,
  converseStopSequence,
  mapStopReason,
  normaliseConverseUsage,
} from './response.ts';

interface ConverseEvent {
  contentBlockIndex?: number;
  start?: { toolUse?: { toolUseId?: string; name?: string } };
  delta?: { text?: string; toolUse?: { input?: string } };
  stopReason?: string;
  additionalModelResponseFields?: unknown;
  usage?: ConverseUsage;
}

export class ConverseStreamMapper implements StreamMapper {
  private stopped = false;
  /** content block index → tool call index. */
  private toolIndex = new Map<number, number>();

  onEvent(ev: SseEvent, out: StreamEvent[]): void {
    if (isErrorEvent(ev)) throw bedrockStreamError(errorEventData(ev));
    const raw = parseEventJson(ev.data);
    if (!isObject(raw)) return;
    const e = raw as ConverseEvent;
    switch (ev.event) {
      case 'contentBlockStart': {
        const tool = e.start?.toolUse;
        if (!tool) return;
        const index = this.toolIndex.size;
        this.toolIndex.set(e.contentBlockIndex ?? 0, index);
        out.push({
          type: 'delta',
          tool_calls: [
            { index, id: tool.toolUseId ?? `tooluse_${index}`, name: tool.name ?? '', arguments: '' },
          ],
        });
        return;
      }
      case 'contentBlockDelta': {
        const d = e.delta;
        if (typeof d?.text === 'string') {
          if (d.text.length > 0) out.push({ type: 'delta', content: d.text });
        } else if (d?.toolUse?.input) {
          const index = this.toolIndex.get(e.contentBlockIndex ?? 0);
          if (index !== undefined)
            out.push({ type: 'delta', tool_calls: [{ index, arguments: d.toolUse.input }] });
        }
        return;
      }
      case 'messageStop':
        this.stopped = true;
        out.push({
          type: 'finish',
          finish_reason: mapStopReason(e.stopReason),
          ...converseStopSequence(e.stopReason, e.additionalModelResponseFields),
        });
        return;
      case 'metadata':
        if (e.usage) out.push({ type: 'usage', usage: normaliseConverseUsage(e.usage) });
        return;
      default:
        // messageStart, contentBlockStop, reasoning deltas and future event types
        return;
    }
  }

  end(): boolean {
    return this.stopped;
  }
}
