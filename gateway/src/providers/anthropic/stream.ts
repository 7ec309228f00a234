/** Anthropic Messages SSE → canonical stream events. */
import { errorEventData, isErrorEvent, type SseEvent } from '../../upstream/sse.ts';
import { isObject, parseEventJson, type StreamMapper } from '../common.ts';
import type { StreamEvent } from '../types.ts';
import { anthropicStreamError } from './errors.ts';
import { type AnthropicUsage, mapStopReason, normaliseAnthropicUsage, stopSequenceOf } from './response.ts';

interface AnthropicEvent {
  type?: string;
  index?: number;
  message?: { usage?: AnthropicUsage };
  content_block?: { type?: string; id?: string; name?: string };
  delta?: {
    type?: string;
    text?: string;
    partial_json?: string;
    stop_reason?: string | null;
    stop_sequence?: string | null;
  };
  usage?: AnthropicUsage;
  error?: unknown;
}

/**
 * Anthropic's events as canonical ones. For a native Messages request (`passthrough`) each event
 * also travels as Anthropic sent it, after the canonical events it maps to.
 */
export class AnthropicStreamMapper implements StreamMapper {
  private readonly passthrough: boolean;
  private stopped = false;
  private inputUsage: AnthropicUsage | undefined;
  /** content block index → tool call index (tool calls are numbered from 0 among tool_use blocks). */
  private toolIndex = new Map<number, number>();

  constructor(passthrough = false) {
    this.passthrough = passthrough;
  }

  onEvent(ev: SseEvent, out: StreamEvent[]): void {
    // `ping` carries no information; skip it without parsing.
    if (ev.event === 'ping' && !this.passthrough) return;
    if (isErrorEvent(ev)) throw anthropicStreamError(errorEventData(ev));
    const raw = parseEventJson(ev.data);
    if (!isObject(raw)) return;
    this.map(raw as AnthropicEvent, ev.event, out);
    if (this.passthrough)
      out.push({
        type: 'native',
        dialect: 'anthropic-messages',
        event: ev.event ?? String(raw.type),
        data: raw,
      });
  }

  private map(e: AnthropicEvent, event: string | undefined, out: StreamEvent[]): void {
    switch (e.type ?? event) {
      case 'message_start':
        this.inputUsage = e.message?.usage;
        return;
      case 'content_block_start': {
        const block = e.content_block;
        if (block?.type === 'tool_use') {
          const index = this.toolIndex.size;
          this.toolIndex.set(e.index ?? 0, index);
          out.push({
            type: 'delta',
            tool_calls: [{ index, id: block.id ?? `toolu_${index}`, name: block.name ?? '', arguments: '' }],
          });
        }
        return;
      }
      case 'content_block_delta': {
        const d = e.delta;
        if (!d) return;
        if (d.type === 'text_delta') {
          if (d.text) out.push({ type: 'delta', content: d.text });
        } else if (d.type === 'input_json_delta') {
          const index = this.toolIndex.get(e.index ?? 0);
          if (index !== undefined && d.partial_json) {
            out.push({ type: 'delta', tool_calls: [{ index, arguments: d.partial_json }] });
          }
        }
        return;
      }
      case 'message_delta': {
        if (e.delta?.stop_reason) {
          out.push({
            type: 'finish',
            finish_reason: mapStopReason(e.delta.stop_reason),
            ...stopSequenceOf(e.delta.stop_reason, e.delta.stop_sequence),
          });
        }
        // message_delta usage is cumulative; input tokens come from message_start unless repeated here.
        const u = e.usage;
        if (u) {
          const merged: AnthropicUsage = { ...this.inputUsage, ...stripNull(u) };
          out.push({ type: 'usage', usage: normaliseAnthropicUsage(merged) });
        } else if (this.inputUsage) {
          out.push({
            type: 'usage',
            usage: normaliseAnthropicUsage({ ...this.inputUsage, output_tokens: 0 }),
          });
        }
        return;
      }
      case 'message_stop':
        this.stopped = true;
        return;
      case 'error':
        throw anthropicStreamError(e);
      default:
        // content_block_stop, ping, thinking/signature deltas and future event types
        return;
    }
  }

  end(): boolean {
    return this.stopped;
  }
}

function stripNull(u: AnthropicUsage): AnthropicUsage {
  const out: AnthropicUsage = {};
  if (typeof u.input_tokens === 'number') out.input_tokens = u.input_tokens;
  if (typeof u.output_tokens === 'number') out.output_tokens = u.output_tokens;
  if (typeof u.cache_creation_input_tokens === 'number')
    out.cache_creation_input_tokens = u.cache_creation_input_tokens;
  if (typeof u.cache_read_input_tokens === 'number') out.cache_read_input_tokens = u.cache_read_input_tokens;
  if (isObject(u.cache_creation)) out.cache_creation = u.cache_creation;
  return out;
}
