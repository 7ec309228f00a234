/**
 * When a simulated model calls a tool — the same rule for every provider:
 *   - no tools, or tool choice "none" (OpenAI 'none', Anthropic {type:'none'}, Gemini mode NONE): never;
 *   - a named tool is forced (OpenAI {type:'function'}, Anthropic {type:'tool'}, Gemini allowedFunctionNames
 *     with mode ANY): call that tool;
 *   - "required"/"any"/ANY: call the first tool;
 *   - "auto" (the default): call the first tool, unless the last message is a tool result, in which case the
 *     model answers with text (so agent loops terminate after one round trip).
 * Arguments are fakeFromSchema(<tool's parameter schema>, seed "<tool name>|<last user text>"), unless a
 * fault rule scripts the call (`toolCall`): then, where a tool would be called and the scripted one is
 * offered and not overridden by a forced choice, that tool is called with the scripted arguments.
 */
import { fakeFromSchema } from './schema-sample.ts';
import type { ScriptedToolCall } from './types.ts';

export interface ToolSpec {
  name: string;
  schema: unknown;
}

export type ToolMode =
  | { mode: 'none' }
  | { mode: 'auto' }
  | { mode: 'required' }
  | { mode: 'named'; name: string };

export interface PlannedCall {
  name: string;
  args: unknown;
  /** True when the caller forced this specific tool (OpenAI then reports finish_reason "stop"). */
  forced: boolean;
}

export function planToolCall(
  tools: readonly ToolSpec[],
  choice: ToolMode,
  lastIsToolResult: boolean,
  lastUserText: string,
  scripted?: ScriptedToolCall,
): PlannedCall | undefined {
  if (tools.length === 0 || choice.mode === 'none') return undefined;
  // After a tool result the model answers, unless the test scripted its next call (a chain: a
  // tool search, then the tool it found).
  if (choice.mode === 'auto' && lastIsToolResult && !scripted) return undefined;
  if (scripted && choice.mode !== 'named' && tools.some((t) => t.name === scripted.name))
    return { name: scripted.name, args: scripted.args, forced: false };
  const tool = choice.mode === 'named' ? tools.find((t) => t.name === choice.name) : tools[0];
  if (!tool) return undefined;
  const schema = tool.schema ?? { type: 'object', properties: {} };
  return {
    name: tool.name,
    args: fakeFromSchema(schema, `${tool.name}|${lastUserText}`) ?? {},
    forced: choice.mode === 'named',
  };
}
