import type { ChatResult, StreamEvent, Usage } from '../providers/types.ts';

/** Anthropic's stop reasons for the canonical finish reasons. */
const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

export const stopReason = (finish: string): string => STOP_REASONS[finish] ?? 'end_turn';

export const messagesUsage = (u: Usage | undefined): Record<string, number> => ({
  input_tokens: u?.prompt_tokens ?? 0,
  cache_creation_input_tokens: 0,
  cache_read_input_tokens: 0,
  output_tokens: u?.completion_tokens ?? 0,
});

/** Tool arguments as the object Anthropic's tool_use.input is; text that is not JSON stays visible. */
export function toolInput(args: string): unknown {
  if (args.trim() === '') return {};
  try {
    const v: unknown = JSON.parse(args);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? v : { value: v };
  } catch {
    return { arguments: args };
  }
}

/** The Message object of a non-streamed answer; `model` is the workflow name. */
export function messageObject(id: string, model: string, result: ChatResult): Record<string, unknown> {
  const content: Record<string, unknown>[] = [];
  if (result.content) content.push({ type: 'text', text: result.content });
  for (const tc of result.tool_calls ?? [])
    content.push({
      type: 'tool_use',
      id: tc.id,
      name: tc.function.name,
      input: toolInput(tc.function.arguments),
    });
  return {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content,
    stop_reason: stopReason(result.finish_reason),
    // Providers report a stop on a stop sequence as a plain stop, without the sequence.
    stop_sequence: null,
    usage: messagesUsage(result.usage),
  };
}

type OpenBlock = { kind: 'text' } | { kind: 'tool'; call: number };

export interface MessagesEvent {
  event: string;
  data: Record<string, unknown>;
}

/**
 * Canonical stream events as Anthropic's: message_start and a ping, then one content block per text
 * run or tool call (start, deltas, stop), then message_delta with the stop reason and usage, and
 * message_stop. A tool call's block opens when its first delta arrives and closes the block before.
 */
export class MessagesStreamEncoder {
  readonly #id: string;
  readonly #model: string;
  #index = -1;
  #open: OpenBlock | undefined;
  #finish = 'stop';

  constructor(id: string, model: string) {
    this.#id = id;
    this.#model = model;
  }

  start(inputTokens: number): MessagesEvent[] {
    return [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: this.#id,
            type: 'message',
            role: 'assistant',
            model: this.#model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { ...messagesUsage(undefined), input_tokens: inputTokens, output_tokens: 1 },
          },
        },
      },
      { event: 'ping', data: { type: 'ping' } },
    ];
  }

  #close(): MessagesEvent[] {
    if (!this.#open) return [];
    this.#open = undefined;
    return [{ event: 'content_block_stop', data: { type: 'content_block_stop', index: this.#index } }];
  }

  #begin(block: Record<string, unknown>, open: OpenBlock): MessagesEvent[] {
    const out = this.#close();
    this.#index++;
    this.#open = open;
    out.push({
      event: 'content_block_start',
      data: { type: 'content_block_start', index: this.#index, content_block: block },
    });
    return out;
  }

  #delta(delta: Record<string, unknown>): MessagesEvent {
    return { event: 'content_block_delta', data: { type: 'content_block_delta', index: this.#index, delta } };
  }

  next(ev: StreamEvent): MessagesEvent[] {
    if (ev.type === 'finish') {
      this.#finish = ev.finish_reason;
      return [];
    }
    if (ev.type !== 'delta') return [];
    const out: MessagesEvent[] = [];
    if (ev.content) {
      if (this.#open?.kind !== 'text') out.push(...this.#begin({ type: 'text', text: '' }, { kind: 'text' }));
      out.push(this.#delta({ type: 'text_delta', text: ev.content }));
    }
    for (const tc of ev.tool_calls ?? []) {
      const same = this.#open?.kind === 'tool' && this.#open.call === tc.index;
      if (!same)
        out.push(
          ...this.#begin(
            {
              type: 'tool_use',
              id: tc.id ?? `toolu_${this.#id}_${tc.index}`,
              name: tc.name ?? '',
              input: {},
            },
            { kind: 'tool', call: tc.index },
          ),
        );
      if (tc.arguments) out.push(this.#delta({ type: 'input_json_delta', partial_json: tc.arguments }));
    }
    return out;
  }

  finish(usage: Usage | undefined): MessagesEvent[] {
    const out = this.#close();
    out.push({
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: { stop_reason: stopReason(this.#finish), stop_sequence: null },
        usage: messagesUsage(usage),
      },
    });
    out.push({ event: 'message_stop', data: { type: 'message_stop' } });
    return out;
  }
}
