/**
 * :generateContent and :streamGenerateContent. The outcome is decided once:
 *   functionDeclarations → functionCall per toolcall.ts (mode NONE/AUTO/ANY; ANY with allowedFunctionNames
 *   forces the first allowed name);
 *   responseMimeType application/json → JSON sampled from responseJsonSchema or responseSchema
 *   ({"reply": <text>} without a schema);
 *   otherwise the deterministic reply text cut by stopSequences and maxOutputTokens (→ MAX_TOKENS).
 */

import type { Exchange } from '../exchange.ts';
import { applyLimits, newId, replyText, tokens } from '../generate.ts';
import { PNG_1X1 } from '../media.ts';
import { sendJson } from '../respond.ts';
import { fakeFromSchema } from '../schema-sample.ts';
import { writeStream } from '../sse.ts';
import { planToolCall, type ToolMode } from '../toolcall.ts';
import type { GeminiContent, GenerateContentRequest } from './schemas.ts';
import { type GenerateOutcome, usageMetadata } from './shapes.ts';
import { streamFrames } from './stream.ts';

function partsText(parts: GeminiContent['parts'], all: boolean): string {
  const out: string[] = [];
  for (const p of parts) {
    if (p.text !== undefined && !p.thought) out.push(p.text);
    else if (all && p.functionCall) out.push(JSON.stringify(p.functionCall));
    else if (all && p.functionResponse) out.push(JSON.stringify(p.functionResponse));
  }
  return out.join(' ');
}

function lastUserText(contents: readonly GeminiContent[]): string {
  for (let i = contents.length - 1; i >= 0; i--) {
    const c = contents[i]!;
    if (c.role === 'model') continue;
    const text = partsText(c.parts, false);
    if (text) return text;
  }
  return '';
}

function toolMode(req: GenerateContentRequest): ToolMode {
  const cfg = req.toolConfig?.functionCallingConfig;
  if (cfg?.mode === 'NONE') return { mode: 'none' };
  if (cfg?.mode === 'ANY' || cfg?.mode === 'VALIDATED') {
    const allowed = cfg.allowedFunctionNames?.[0];
    if (allowed) return { mode: 'named', name: allowed };
    return cfg.mode === 'ANY' ? { mode: 'required' } : { mode: 'auto' };
  }
  return { mode: 'auto' };
}

export function decideGenerate(ex: Exchange, req: GenerateContentRequest, minChars: number): GenerateOutcome {
  const userText = lastUserText(req.contents);
  const system = req.systemInstruction ? partsText(req.systemInstruction.parts, false) : '';
  const prompt = system + req.contents.map((c) => partsText(c.parts, true)).join(' ');
  const promptTokens = tokens(prompt);
  const cachedTokens = Math.min(ex.fault.cachedTokens ?? 0, promptTokens);
  const base = { responseId: newId(''), model: ex.model, promptTokens, cachedTokens };

  const tools = (req.tools ?? []).flatMap((t) =>
    (t.functionDeclarations ?? []).map((f) => ({
      name: f.name,
      schema: f.parametersJsonSchema ?? f.parameters,
    })),
  );
  const last = req.contents[req.contents.length - 1];
  const lastIsToolResult = !!last?.parts.some((p) => p.functionResponse !== undefined);
  const call = planToolCall(tools, toolMode(req), lastIsToolResult, userText, ex.fault.toolCall);
  if (call) {
    return {
      ...base,
      part: { functionCall: { name: call.name, args: call.args } },
      finishReason: 'STOP',
      outputTokens: tokens(call.name + JSON.stringify(call.args)),
    };
  }
  const cfg = req.generationConfig;
  // Image models asked for an image answer with a PNG; audio in the prompt is "transcribed".
  if (cfg?.responseModalities?.some((m) => m.toUpperCase() === 'IMAGE'))
    return {
      ...base,
      part: { inlineData: { mimeType: 'image/png', data: PNG_1X1.toString('base64') } },
      finishReason: 'STOP',
      outputTokens: 1290,
    };
  const audio = req.contents.flatMap((c) => c.parts).find((p) => p.inlineData?.mimeType.startsWith('audio/'));
  if (audio?.inlineData) {
    const bytes = Buffer.from(audio.inlineData.data, 'base64').length;
    const transcript = `Simulated transcript of ${bytes} bytes of ${audio.inlineData.mimeType}.`;
    return { ...base, part: { text: transcript }, finishReason: 'STOP', outputTokens: tokens(transcript) };
  }
  const text = replyText(ex.provider, ex.model, userText, minChars);
  if (cfg?.responseMimeType === 'application/json') {
    const schema = cfg.responseJsonSchema ?? cfg.responseSchema;
    const json = JSON.stringify(schema === undefined ? { reply: text } : fakeFromSchema(schema, userText));
    return { ...base, part: { text: json }, finishReason: 'STOP', outputTokens: tokens(json) };
  }
  const limited = applyLimits(text, cfg?.maxOutputTokens, cfg?.stopSequences ?? []);
  return {
    ...base,
    part: { text: limited.text },
    finishReason: limited.reason === 'length' ? 'MAX_TOKENS' : 'STOP',
    outputTokens: tokens(limited.text),
  };
}

export async function handleGenerate(ex: Exchange): Promise<void> {
  const o = decideGenerate(ex, ex.body as GenerateContentRequest, 0);
  return sendJson(ex, 200, {
    candidates: [{ content: { parts: [o.part], role: 'model' }, finishReason: o.finishReason, index: 0 }],
    usageMetadata: usageMetadata(o),
    modelVersion: o.model,
    responseId: o.responseId,
  });
}

export async function handleStreamGenerate(ex: Exchange): Promise<void> {
  const o = decideGenerate(ex, ex.body as GenerateContentRequest, ex.streamChunks);
  const sse = ex.url.searchParams.get('alt') === 'sse';
  const frames = streamFrames(o, ex.streamChunks, sse);
  return writeStream(ex, frames, sse ? 'text/event-stream' : 'application/json; charset=UTF-8');
}
