import type { StreamEvent, Usage } from '../providers/types.ts';
import { customInput } from '../requests/responses-tools.ts';
import { newId } from '../requests/responses-translate.ts';
import {
  finishedStatus,
  messageItem,
  type OutputItem,
  type ResponseEcho,
  responseObject,
  toolCallItem,
} from './encode-responses.ts';

/** One typed event of a Responses stream: `event: <type>` and the same type in its data. */
export interface TypedEvent {
  type: string;
  [field: string]: unknown;
}

interface OpenCall {
  item: OutputItem;
  outputIndex: number;
  args: string;
}

/**
 * Turns canonical stream events into the Responses API's typed events, numbering them with
 * `sequence_number`. Text becomes one message item; each tool call a function_call item; items are
 * closed in order when the stream finishes.
 */
export class ResponsesStreamEncoder {
  readonly #echo: ResponseEcho;
  #seq = 0;
  #output: OutputItem[] = [];
  #text: { item: OutputItem; outputIndex: number; text: string } | undefined;
  readonly #calls = new Map<number, OpenCall>();
  #finishReason = 'stop';

  constructor(echo: ResponseEcho) {
    this.#echo = echo;
  }

  #ev(type: string, fields: Record<string, unknown>): TypedEvent {
    return { type, sequence_number: this.#seq++, ...fields };
  }

  /** response.created and response.in_progress. */
  start(): TypedEvent[] {
    const response = responseObject(this.#echo, { status: 'in_progress', output: [] });
    return [this.#ev('response.created', { response }), this.#ev('response.in_progress', { response })];
  }

  next(ev: StreamEvent): TypedEvent[] {
    if (ev.type === 'finish') {
      this.#finishReason = ev.finish_reason;
      return [];
    }
    if (ev.type !== 'delta') return [];
    const out: TypedEvent[] = [];
    if (ev.content) {
      if (!this.#text) {
        const item = messageItem(newId('msg'), '', 'in_progress');
        this.#text = { item, outputIndex: this.#output.length, text: '' };
        this.#output.push(item);
        out.push(this.#ev('response.output_item.added', { output_index: this.#text.outputIndex, item }));
        out.push(
          this.#ev('response.content_part.added', {
            item_id: item.id,
            output_index: this.#text.outputIndex,
            content_index: 0,
            part: { type: 'output_text', text: '', annotations: [], logprobs: [] },
          }),
        );
      }
      this.#text.text += ev.content;
      out.push(
        this.#ev('response.output_text.delta', {
          item_id: this.#text.item.id,
          output_index: this.#text.outputIndex,
          content_index: 0,
          delta: ev.content,
          logprobs: [],
        }),
      );
    }
    for (const tc of ev.tool_calls ?? []) {
      let call = this.#calls.get(tc.index);
      if (!call) {
        const item = toolCallItem(
          { id: tc.id ?? newId('call'), name: tc.name ?? '', arguments: '' },
          'in_progress',
          this.#echo.toolNames,
        );
        call = { item, outputIndex: this.#output.length, args: '' };
        this.#calls.set(tc.index, call);
        this.#output.push(item);
        out.push(this.#ev('response.output_item.added', { output_index: call.outputIndex, item }));
      }
      if (tc.arguments) {
        call.args += tc.arguments;
        // A custom tool's input is a field of the provider's JSON arguments: it is sent whole at the end.
        if (call.item.type === 'custom_tool_call') continue;
        out.push(
          this.#ev('response.function_call_arguments.delta', {
            item_id: call.item.id,
            output_index: call.outputIndex,
            delta: tc.arguments,
          }),
        );
      }
    }
    return out;
  }

  /** Closes the open items; the final object is what response.completed carries (and is stored). */
  finish(usage: Usage | undefined): { events: TypedEvent[]; response: Record<string, unknown> } {
    const out = this.#closeItems('completed');
    const status = finishedStatus(this.#finishReason);
    const response = responseObject(this.#echo, {
      status,
      output: this.#output,
      usage,
      finishReason: this.#finishReason,
    });
    out.push(this.#ev(status === 'completed' ? 'response.completed' : 'response.incomplete', { response }));
    return { events: out, response };
  }

  /** A stream that failed after it started: response.failed, then an `error` event SDKs raise. */
  fail(code: string, message: string): TypedEvent[] {
    const out = this.#closeItems('incomplete');
    const response = responseObject(this.#echo, {
      status: 'failed',
      output: this.#output,
      error: { code, message },
    });
    out.push(this.#ev('response.failed', { response }));
    out.push(this.#ev('error', { code, message, param: null }));
    return out;
  }

  #closeItems(status: 'completed' | 'incomplete'): TypedEvent[] {
    const out: TypedEvent[] = [];
    const open: { outputIndex: number; close: () => void }[] = [];
    if (this.#text) {
      const t = this.#text;
      open.push({
        outputIndex: t.outputIndex,
        close: () => {
          const part = { type: 'output_text', text: t.text, annotations: [], logprobs: [] };
          const base = { item_id: t.item.id, output_index: t.outputIndex, content_index: 0 };
          out.push(this.#ev('response.output_text.done', { ...base, text: t.text, logprobs: [] }));
          out.push(this.#ev('response.content_part.done', { ...base, part }));
          Object.assign(t.item, { status, content: [part] });
          out.push(this.#ev('response.output_item.done', { output_index: t.outputIndex, item: t.item }));
        },
      });
    }
    for (const c of this.#calls.values())
      open.push({
        outputIndex: c.outputIndex,
        close: () => {
          if (c.item.type === 'custom_tool_call') {
            const input = customInput(c.args);
            const base = { item_id: c.item.id, output_index: c.outputIndex };
            if (input) out.push(this.#ev('response.custom_tool_call_input.delta', { ...base, delta: input }));
            out.push(this.#ev('response.custom_tool_call_input.done', { ...base, input }));
            Object.assign(c.item, { status, input });
            out.push(this.#ev('response.output_item.done', { output_index: c.outputIndex, item: c.item }));
            return;
          }
          out.push(
            this.#ev('response.function_call_arguments.done', {
              item_id: c.item.id,
              output_index: c.outputIndex,
              name: c.item.name,
              arguments: c.args,
            }),
          );
          Object.assign(c.item, { status, arguments: c.args });
          out.push(this.#ev('response.output_item.done', { output_index: c.outputIndex, item: c.item }));
        },
      });
    for (const o of open.sort((a, b) => a.outputIndex - b.outputIndex)) o.close();
    return out;
  }
}
