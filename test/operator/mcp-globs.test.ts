/** Tool name patterns as the operator counts offered tools: `*` is the only wildcard. */
import { describe, expect, it } from 'vitest';
import { globToRegExp, toolOffered } from '#operator/mcp/globs';

describe('tool name patterns', () => {
  it.each([
    ['search_*', 'search_code', true],
    ['search_*', 'search_', true],
    ['search_*', 'research_code', false],
    ['*delete*', 'force_delete_repo', true],
    ['get_issue', 'get_issue', true],
    ['get_issue', 'get_issues', false],
    ['a.b', 'axb', false], // a dot is a dot, not "any character"
    ['a.b', 'a.b', true],
    ['*', '', true],
    ['x-*', 'x-1', true],
  ])('%s against %s: %s', (glob, name, matches) => {
    expect(globToRegExp(glob).test(name)).toBe(matches);
  });

  it('allow (absent: everything) and deny (wins over allow)', () => {
    expect(toolOffered('echo', undefined, [])).toBe(true);
    expect(toolOffered('echo', ['e*'], [])).toBe(true);
    expect(toolOffered('add', ['e*'], [])).toBe(false);
    expect(toolOffered('echo', ['*'], ['echo'])).toBe(false);
    expect(toolOffered('time', undefined, ['t*'])).toBe(false);
  });
});
