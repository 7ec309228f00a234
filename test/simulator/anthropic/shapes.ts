/** The decided outcome of a Messages request, shared by the JSON and the streamed rendering. */

export type ContentOut =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown };

export interface MessageOutcome {
  id: string;
  model: string;
  block: ContentOut;
  stopReason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use';
  stopSequence: string | null;
  inputTokens: number;
  outputTokens: number;
}

export function usageOf(o: MessageOutcome, outputTokens = o.outputTokens) {
  return {
    input_tokens: o.inputTokens,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    output_tokens: outputTokens,
    service_tier: 'standard',
  };
}
