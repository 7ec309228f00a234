import { describe, expect, it } from 'vitest';
import { schemaName } from '#gateway/requests/structured';
import { asRuleName, checkedToolName, isToolName, toolName } from '#gateway/requests/tool-name';
import { refusal } from './refusal.ts';

const GOOD = ['get_weather', 'a', 'Lookup-Order-2', 'x'.repeat(64)];
const BAD = ['', 'get weather', 'x'.repeat(65), 'café', 'ns.tool', 'a/b', 42, null, undefined];

describe('the tool-name rule', () => {
  it('the predicate and the schema agree', () => {
    for (const name of GOOD) {
      expect(isToolName(name)).toBe(true);
      expect(toolName.safeParse(name).success).toBe(true);
    }
    for (const name of BAD) {
      expect(isToolName(name)).toBe(false);
      expect(toolName.safeParse(name).success).toBe(false);
    }
  });

  it('the schema says the rule', () => {
    const r = toolName.safeParse('get weather');
    expect(r.success ? undefined : r.error.issues[0]?.message).toBe(
      'tool names are 1-64 letters, digits, _ or -',
    );
  });

  it('checkedToolName returns a good name and refuses a bad one where it stands', () => {
    expect(checkedToolName('get_weather', 'tools[0].name')).toBe('get_weather');
    expect(refusal(() => checkedToolName('get weather', 'tools[3].name'))).toEqual({
      code: 'invalid_request',
      status: 400,
      message: 'Invalid tool: names are 1-64 letters, digits, _ or -.',
      param: 'tools[3].name',
    });
  });

  it('asRuleName makes any text follow it, and schema names are made so', () => {
    expect(asRuleName('order pipeline/v2', 'output')).toBe('order_pipeline_v2');
    expect(asRuleName('y'.repeat(80), 'output')).toBe('y'.repeat(64));
    expect(asRuleName('', 'output')).toBe('output');
    expect(schemaName('support.bot')).toBe('support_bot');
    expect(schemaName('')).toBe('output');
    for (const text of ['a b', 'é', 'z'.repeat(70)])
      expect(isToolName(asRuleName(text, 'output'))).toBe(true);
  });
});
