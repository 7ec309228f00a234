import type { ChatResult, StopSequence, StreamEvent, Usage } from '../providers/types.ts';

/** What a Message names besides its answer: its id, the workflow as `model`, the request's stop sequences. */
export interface MessageContext {
  id: string;
  model: string;
  stops: readonly string[] | undefined;
}

/** Anthropic's stop reasons for the canonical finish reasons. */
const STOP_REASONS: Record<string, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

export const stopReason = (finish: string): string => STOP_REASONS[finish] ?? 'end_turn';

/**
 * `stop_reason` and `stop_sequence`: a stop on a stop sequence when the provider says so; the
 * sequence is the one it names, or the request's only one. OpenAI and Gemini do not tell a stop
 * sequence from a natural end, so theirs is `end_turn`.
 */
function stopOf(
  finish: string,
  stop: StopSequence,
  stops: readonly string[] | undefined,
): { stop_reason: string; stop_sequence: string | null } {
  if (stop.stop_sequence === undefined) return { stop_reason: stopReason(finish), stop_sequence: null };
  return {
    stop_reason: 'stop_sequence',
    stop_sequence: stop.stop_sequence ?? (stops?.length === 1 ? stops[0]! : null),
  };
}

/** Anthropic's usage: input_tokens excludes the prompt-cache writes and reads, which it reports apart. */
export function messagesUsage(u: Usage | undefined): Record<string, number> {
  const write = u?.cache_write_tokens ?? 0;
  const read = u?.cache_read_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (u?.prompt_tokens ?? 0) - write - read),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: u?.completion_tokens ?? 0,
  };
}

/**
 * A non-streamed Message's usage: the counts above and the cache writes by lifetime, as Claude's
 * `cache_creation`. A stream's `message_delta` has no such object.
 */
export function messageObjectUsage(u: Usage | undefined): Record<string, unknown> {
  const hour = u?.cache_write_1h_tokens ?? 0;
  return {
    ...messagesUsage(u),
    cache_creation: {
      ephemeral_5m_input_tokens: (u?.cache_write_tokens ?? 0) - hour,
      ephemeral_1h_input_tokens: hour,
    },
  };
}

/** Who called a tool: the model itself (the SDK's types require the field); shared, never mutated. */
const DIRECT_CALLER = Object.freeze({ type: 'direct' });

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

/**
 * The Message object of a non-streamed answer; `model` is the workflow name. Claude's answer to a
 * native request is sent as Claude sent it (thinking blocks, cache usage), with that model.
 */
export function messageObject(ctx: MessageContext, result: ChatResult): Record<string, unknown> {
  if (result.native?.dialect === 'anthropic-messages') return { ...result.native.body, model: ctx.model };
  const content: Record<string, unknown>[] = [];
  if (result.content) content.push({ type: 'text', text: result.content });
  for (const tc of result.tool_calls ?? [])
    content.push({
      type: 'tool_use',
      id: tc.id,
      name: tc.function.name,
      input: toolInput(tc.function.arguments),
      caller: DIRECT_CALLER,
    });
  return {
    id: ctx.id,
    type: 'message',
    role: 'assistant',
    model: ctx.model,
    content,
    ...stopOf(result.finish_reason, result, ctx.stops),
    usage: messageObjectUsage(result.usage),
  };
}

type OpenBlock = { kind: 'text' } | { kind: 'tool'; call: number };

export interface MessagesEvent {
  event: string;
  data: Record<string, unknown>;
}

/** Events of a native stream held until the stream is known to have answered (see finish). */
const CLOSING = new Set(['message_delta', 'message_stop']);

/**
 * A stream as Anthropic's events. Claude's own events (a native request) pass as Claude sent them,
 * with the workflow as `model`; its closing events wait for the stream's end, so a stream the
 * gateway fails at its end (an answer off the schema) ends with an error instead.
 *
 * Otherwise canonical events become Anthropic's: message_start and a ping, then one content block
 * per text run or tool call (start, deltas, stop), then message_delta with the stop reason and
 * usage, and message_stop. A tool call's block opens when its first delta arrives and closes the
 * block before. Which of the two a stream is, its first event says.
 */
export class MessagesStreamEncoder {
  readonly #ctx: MessageContext;
  readonly #inputTokens: number;
  #mode: 'native' | 'canonical' | undefined;
  #held: MessagesEvent[] = [];
  #index = -1;
  #open: OpenBlock | undefined;
  #finish = 'stop';
  #stop: StopSequence = {};

  constructor(ctx: MessageContext, inputTokens: number) {
    this.#ctx = ctx;
    this.#inputTokens = inputTokens;
  }

  #start(): MessagesEvent[] {
    this.#mode = 'canonical';
    return [
      {
        event: 'message_start',
        data: {
          type: 'message_start',
          message: {
            id: this.#ctx.id,
            type: 'message',
            role: 'assistant',
            model: this.#ctx.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            // The upstream reports its cache use with its last event: by lifetime, it is not known yet.
            usage: {
              ...messagesUsage(undefined),
              cache_creation: null,
              input_tokens: this.#inputTokens,
              output_tokens: 1,
            },
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

  #native(ev: Extract<StreamEvent, { type: 'native' }>): MessagesEvent[] {
    let data = ev.data;
    if (ev.event === 'message_start' && data.message && typeof data.message === 'object')
      data = { ...data, message: { ...(data.message as Record<string, unknown>), model: this.#ctx.model } };
    const out = { event: ev.event, data };
    if (CLOSING.has(ev.event)) {
      this.#held.push(out);
      return [];
    }
    return [out];
  }

  next(ev: StreamEvent): MessagesEvent[] {
    if (this.#mode === undefined) {
      if (ev.type === 'native') this.#mode = 'native';
      else return [...this.#start(), ...this.next(ev)];
    }
    if (this.#mode === 'native') return ev.type === 'native' ? this.#native(ev) : [];
    if (ev.type === 'finish') {
      this.#finish = ev.finish_reason;
      if (ev.stop_sequence !== undefined) this.#stop = { stop_sequence: ev.stop_sequence };
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
              id: tc.id ?? `toolu_${this.#ctx.id}_${tc.index}`,
              name: tc.name ?? '',
              input: {},
              caller: DIRECT_CALLER,
            },
            { kind: 'tool', call: tc.index },
          ),
        );
      if (tc.arguments) out.push(this.#delta({ type: 'input_json_delta', partial_json: tc.arguments }));
    }
    return out;
  }

  /** The stream answered: its closing events. */
  finish(usage: Usage | undefined): MessagesEvent[] {
    if (this.#mode === 'native') return this.#held;
    const out = this.#mode === undefined ? this.#start() : this.#close();
    out.push({
      event: 'message_delta',
      data: {
        type: 'message_delta',
        delta: stopOf(this.#finish, this.#stop, this.#ctx.stops),
        usage: messagesUsage(usage),
      },
    });
    out.push({ event: 'message_stop', data: { type: 'message_stop' } });
    return out;
  }

  /** The stream failed: what opens it, when nothing has (the error event follows). */
  failing(): MessagesEvent[] {
    return this.#mode === undefined ? this.#start() : [];
  }
}
