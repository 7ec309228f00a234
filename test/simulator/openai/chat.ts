/**
 * POST /v1/chat/completions (and Azure's deployment variant): decides the outcome of a request once, then
 * renders it as a chat.completion object or as chat.completion.chunk events.
 *   tools → tool call per toolcall.ts (OpenAI quirk kept: a forced named tool ends with finish_reason "stop");
 *   response_format json_schema → content = JSON sampled from the schema (seed: last user text);
 *   response_format json_object → content = {"reply": <reply text>} (400 unless a message mentions JSON);
 *   otherwise the deterministic reply text, cut by `stop` and max_completion_tokens/max_tokens.
 */

import type { Exchange } from '../exchange.ts';
import { applyLimits, newId, replyText, tokens, unixSeconds } from '../generate.ts';
import { sendError, sendJson } from '../respond.ts';
import { fakeFromSchema } from '../schema-sample.ts';
import { writeStream } from '../sse.ts';
import { planToolCall, type ToolMode } from '../toolcall.ts';
import { openaiError } from './errors.ts';
import { lastIsToolResult, lastUserText, mentionsJson, promptText } from './messages.ts';
import type { ChatRequest } from './schemas.ts';
import { AZURE_FILTER, AZURE_PROMPT_FILTER, type ChatOutcome, usageOf } from './shapes.ts';
import { chatFrames } from './stream.ts';

function toolMode(req: ChatRequest): ToolMode {
  const choice = req.tool_choice;
  if (choice === undefined || choice === 'auto') return { mode: 'auto' };
  if (choice === 'none') return { mode: 'none' };
  if (choice === 'required') return { mode: 'required' };
  return { mode: 'named', name: choice.function.name };
}

export function decideChat(ex: Exchange, req: ChatRequest, minChars: number): ChatOutcome {
  const userText = lastUserText(req.messages);
  const promptTokens = ex.fault.promptTokens ?? tokens(promptText(req));
  const base = {
    id: newId('chatcmpl-'),
    created: unixSeconds(),
    model: ex.model,
    promptTokens,
    cachedTokens: Math.min(ex.fault.cachedTokens ?? 0, promptTokens),
  };
  const tools = (req.tools ?? []).map((t) => ({ name: t.function.name, schema: t.function.parameters }));
  const call = planToolCall(
    tools,
    toolMode(req),
    lastIsToolResult(req.messages),
    userText,
    ex.fault.toolCall,
  );
  if (call) {
    const args = JSON.stringify(call.args);
    return {
      ...base,
      content: null,
      toolCall: { id: newId('call_'), name: call.name, arguments: args },
      finishReason: call.forced ? 'stop' : 'tool_calls',
      completionTokens: tokens(call.name + args),
    };
  }
  const format = req.response_format;
  if (format?.type === 'json_schema') {
    const content = JSON.stringify(fakeFromSchema(format.json_schema.schema ?? {}, userText));
    return { ...base, content, finishReason: 'stop', completionTokens: tokens(content) };
  }
  const text = replyText(ex.provider, ex.model, userText, minChars);
  if (format?.type === 'json_object') {
    const content = JSON.stringify({ reply: text });
    return { ...base, content, finishReason: 'stop', completionTokens: tokens(content) };
  }
  const stops = req.stop == null ? [] : typeof req.stop === 'string' ? [req.stop] : req.stop;
  const limited = applyLimits(text, req.max_completion_tokens ?? req.max_tokens ?? undefined, stops);
  return {
    ...base,
    content: limited.text,
    finishReason: limited.reason === 'length' ? 'length' : 'stop',
    completionTokens: tokens(limited.text),
  };
}

function choiceOf(o: ChatOutcome, index: number, azure: boolean) {
  const message: Record<string, unknown> = {
    role: 'assistant',
    content: o.content,
    refusal: null,
    annotations: [],
  };
  if (o.toolCall) {
    message.tool_calls = [
      {
        id: o.toolCall.id,
        type: 'function',
        function: { name: o.toolCall.name, arguments: o.toolCall.arguments },
      },
    ];
  }
  const choice: Record<string, unknown> = { index, message, logprobs: null, finish_reason: o.finishReason };
  if (azure) choice.content_filter_results = AZURE_FILTER;
  return choice;
}

export async function handleChat(ex: Exchange): Promise<void> {
  const req = ex.body as ChatRequest;
  if (req.response_format?.type === 'json_object' && !mentionsJson(req.messages)) {
    return sendError(
      ex,
      openaiError(
        400,
        "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.",
        'invalid_request_error',
        null,
        'messages',
      ),
    );
  }
  const azure = ex.provider === 'azure-openai';
  if (req.stream) {
    const outcome = decideChat(ex, req, ex.streamChunks);
    return writeStream(
      ex,
      chatFrames(outcome, ex.streamChunks, req.stream_options?.include_usage === true, azure),
    );
  }
  const outcome = decideChat(ex, req, 0);
  const n = req.n ?? 1;
  const body: Record<string, unknown> = {
    id: outcome.id,
    object: 'chat.completion',
    created: outcome.created,
    model: outcome.model,
    choices: Array.from({ length: n }, (_, i) => choiceOf(outcome, i, azure)),
    usage: usageOf({ ...outcome, completionTokens: outcome.completionTokens * n }),
    service_tier: 'default',
    system_fingerprint: 'fp_simulator',
  };
  if (azure) body.prompt_filter_results = AZURE_PROMPT_FILTER;
  return sendJson(ex, 200, body);
}
