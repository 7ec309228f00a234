/** Shapes shared by the non-streamed and streamed chat renderings. */

export interface ChatOutcome {
  id: string;
  created: number;
  model: string;
  content: string | null;
  toolCall?: { id: string; name: string; arguments: string };
  finishReason: 'stop' | 'length' | 'tool_calls';
  promptTokens: number;
  /** Of promptTokens, those reported as read from the prompt cache. */
  cachedTokens: number;
  completionTokens: number;
}

export function usageOf(o: ChatOutcome) {
  return {
    prompt_tokens: o.promptTokens,
    completion_tokens: o.completionTokens,
    total_tokens: o.promptTokens + o.completionTokens,
    prompt_tokens_details: { cached_tokens: o.cachedTokens, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

const SAFE = { filtered: false, severity: 'safe' };
/** Azure OpenAI annotates prompts and choices with content-filter results. */
export const AZURE_FILTER = { hate: SAFE, self_harm: SAFE, sexual: SAFE, violence: SAFE };
export const AZURE_PROMPT_FILTER = [{ prompt_index: 0, content_filter_results: AZURE_FILTER }];
