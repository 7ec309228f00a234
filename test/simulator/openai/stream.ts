/**
 * OpenAI streaming bodies: `data: <chunk>\n\n` events ending in `data: [DONE]`.
 * Chat: a role chunk, N content (or tool-call argument) delta chunks, a finish chunk, then — with
 * stream_options.include_usage — a usage chunk with empty choices (every earlier chunk carries usage: null).
 * Azure first sends a chunk with empty choices and prompt_filter_results, as the real service does.
 */
import { splitChunks } from '../generate.ts';
import { dataFrame, type Frame } from '../sse.ts';
import { AZURE_FILTER, AZURE_PROMPT_FILTER, type ChatOutcome, usageOf } from './shapes.ts';

const DONE: Frame = { prefix: 'data: ', json: '[DONE]', suffix: '\n\n' };

export function chatFrames(o: ChatOutcome, chunks: number, includeUsage: boolean, azure: boolean): Frame[] {
  const frames: Frame[] = [];
  const chunk = (delta: Record<string, unknown>, finish: string | null, paced = false) => {
    const choice: Record<string, unknown> = { index: 0, delta, logprobs: null, finish_reason: finish };
    if (azure && (finish !== null || paced))
      choice.content_filter_results = finish !== null ? {} : AZURE_FILTER;
    const body: Record<string, unknown> = {
      id: o.id,
      object: 'chat.completion.chunk',
      created: o.created,
      model: o.model,
      service_tier: 'default',
      system_fingerprint: 'fp_simulator',
      choices: [choice],
    };
    if (includeUsage) body.usage = null;
    frames.push(dataFrame(body, paced));
  };

  if (azure) {
    frames.push(
      dataFrame({
        choices: [],
        created: 0,
        id: '',
        model: '',
        object: '',
        prompt_filter_results: AZURE_PROMPT_FILTER,
      }),
    );
  }
  if (o.toolCall) {
    chunk(
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            index: 0,
            id: o.toolCall.id,
            type: 'function',
            function: { name: o.toolCall.name, arguments: '' },
          },
        ],
        refusal: null,
      },
      null,
    );
    for (const piece of splitChunks(o.toolCall.arguments, chunks)) {
      chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null, true);
    }
  } else {
    chunk({ role: 'assistant', content: '', refusal: null }, null);
    for (const piece of splitChunks(o.content ?? '', chunks)) chunk({ content: piece }, null, true);
  }
  chunk({}, o.finishReason);
  if (includeUsage) {
    frames.push(
      dataFrame({
        id: o.id,
        object: 'chat.completion.chunk',
        created: o.created,
        model: o.model,
        service_tier: 'default',
        system_fingerprint: 'fp_simulator',
        choices: [],
        usage: usageOf(o),
      }),
    );
  }
  frames.push(DONE);
  return frames;
}

export interface CompletionOutcome {
  id: string;
  created: number;
  model: string;
  text: string;
  finishReason: 'stop' | 'length';
  promptTokens: number;
  completionTokens: number;
}

/** Legacy /v1/completions stream: text_completion objects with choices[].text deltas. */
export function completionFrames(o: CompletionOutcome, chunks: number, includeUsage: boolean): Frame[] {
  const frames: Frame[] = [];
  const chunk = (text: string, finish: string | null, paced: boolean) => {
    const body: Record<string, unknown> = {
      id: o.id,
      object: 'text_completion',
      created: o.created,
      choices: [{ text, index: 0, logprobs: null, finish_reason: finish }],
      model: o.model,
      system_fingerprint: 'fp_simulator',
    };
    if (includeUsage) body.usage = null;
    frames.push(dataFrame(body, paced));
  };
  for (const piece of splitChunks(o.text, chunks)) chunk(piece, null, true);
  chunk('', o.finishReason, false);
  if (includeUsage) {
    frames.push(
      dataFrame({
        id: o.id,
        object: 'text_completion',
        created: o.created,
        choices: [],
        model: o.model,
        usage: {
          prompt_tokens: o.promptTokens,
          completion_tokens: o.completionTokens,
          total_tokens: o.promptTokens + o.completionTokens,
        },
      }),
    );
  }
  frames.push(DONE);
  return frames;
}
