import type { Matcher, RE2JS } from 're2js';
import { GITLEAKS_GLOBAL_ALLOW, GITLEAKS_RULES } from './gitleaks-rules.ts';
import { KeywordIndex } from './keywords.ts';
import { compilePattern } from './re2.ts';
import type { GitleaksAllow, GitleaksRule } from './secret-rule.ts';
import { jwtMatcher, pemMatcher } from './secrets-long.ts';
import type { Candidate, SpanMatcher } from './types.ts';

/**
 * Secrets and API keys: gitleaks' default rules (vendored, see gitleaks-rules.ts) on re2js. Like
 * gitleaks, a rule only runs where one of its keywords occurs, and checks the secret's entropy and
 * the rule's allowlists. Unlike gitleaks, the keyword must occur inside the match: that keeps the
 * decision local to the match, which is what lets a stream decide it from a window.
 */

/** Shannon entropy in bits per character, as gitleaks computes it. */
export function entropy(s: string): number {
  const counts = new Map<string, number>();
  for (const ch of s) counts.set(ch, (counts.get(ch) ?? 0) + 1);
  let h = 0;
  const n = [...s].length;
  for (const c of counts.values()) {
    const p = c / n;
    h -= p * Math.log2(p);
  }
  return h;
}

interface CompiledAllow {
  target: 'secret' | 'match';
  regexes: RE2JS[];
  stopwords: string[];
}
const compileAllow = (a: GitleaksAllow): CompiledAllow => ({
  target: a.target,
  regexes: a.regexes.map((r) => compilePattern(r)),
  stopwords: a.stopwords,
});

const allowed = (allows: readonly CompiledAllow[], secret: string, match: string): boolean =>
  allows.some((a) => {
    const subject = a.target === 'match' ? match : secret;
    if (a.regexes.some((re) => re.matcher(subject).find())) return true;
    const lower = secret.toLowerCase();
    return a.stopwords.some((w) => lower.includes(w));
  });

/**
 * Rules whose regex begins every match at a word boundary with one of its keywords: an occurrence
 * inside a word ("docs." for vault's "s.") cannot start a match, so it is skipped before re2js runs.
 * Sound only where the regex says so; checked by hand against the vendored patterns.
 */
const KEYWORD_STARTS_WORD = new Set(['vault-service-token', 'vault-batch-token']);
const isWord = (c: number): boolean =>
  (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

interface Occurrences {
  text: string;
  /** Every keyword occurrence: its keyword id and start, in the order the automaton found them. */
  ids: number[];
  starts: number[];
  /** Per keyword id: whether it occurs at all (most do not: their rules stop at once). */
  present: Uint8Array;
}

class SecretRules {
  readonly index: KeywordIndex;
  readonly matchers: SpanMatcher[];
  #last: Occurrences | null = null;

  constructor(rules: readonly GitleaksRule[]) {
    const ids = new Map<string, number>();
    for (const r of rules) for (const k of r.keywords) if (!ids.has(k)) ids.set(k, ids.size);
    this.index = new KeywordIndex([...ids.keys()]);
    const global = compileAllow(GITLEAKS_GLOBAL_ALLOW);
    this.matchers = rules.map((r) =>
      this.#matcher(
        r,
        r.keywords.map((k) => ids.get(k)!),
        global,
      ),
    );
  }

  /** Keyword occurrences of a text, computed once per text across all rules. */
  occurrences(text: string): Occurrences {
    if (this.#last?.text === text) return this.#last;
    const ids: number[] = [];
    const starts: number[] = [];
    const present = new Uint8Array(this.index.keywords.length);
    this.index.scan(text, (id, start) => {
      ids.push(id);
      starts.push(start);
      present[id] = 1;
    });
    this.#last = { text, ids, starts, present };
    return this.#last;
  }

  #candidate(rule: GitleaksRule, allows: CompiledAllow[], m: Matcher, ws: number, text: string): Candidate {
    const start = m.start() + ws;
    const end = m.end() + ws;
    // As gitleaks: the secret is the rule's secretGroup, else the first non-empty group, else the match.
    let group = rule.secretGroup ?? 0;
    if (group === 0)
      for (let g = 1; g <= m.groupCount(); g++)
        if (m.start(g) >= 0 && m.end(g) > m.start(g)) {
          group = g;
          break;
        }
    const inGroup = group > 0 && m.start(group) >= 0;
    const hs = inGroup ? m.start(group) + ws : start;
    const he = inGroup ? m.end(group) + ws : end;
    const secret = text.slice(hs, he);
    const ok =
      he > hs &&
      (rule.entropy === undefined || entropy(secret) > rule.entropy) &&
      !allowed(allows, secret, text.slice(start, end));
    return { start, end, hits: ok ? [{ start: hs, end: he }] : [] };
  }

  #matcher(rule: GitleaksRule, keywordIds: number[], global: CompiledAllow): SpanMatcher {
    const wordStart = KEYWORD_STARTS_WORD.has(rule.id);
    // Compiled on first use: most rules never see their keyword, and compiling all takes ~0.5 s.
    let re: RE2JS | undefined;
    let allows: CompiledAllow[] | undefined;
    return {
      reach: rule.width + 1,
      behind: 1,
      next: (text: string, from: number): Candidate | null => {
        const occ = this.occurrences(text);
        let any = false;
        for (const id of keywordIds) if (occ.present[id] === 1) any = true;
        if (!any) return null;
        // The first keyword occurrence at or after `from` bounds where a match can start.
        const firstKeyword = (pos: number): number => {
          let best = -1;
          for (let i = 0; i < occ.ids.length; i++) {
            const s = occ.starts[i]!;
            if (s < pos || (best >= 0 && s >= best) || !keywordIds.includes(occ.ids[i]!)) continue;
            if (wordStart && s > 0 && isWord(text.charCodeAt(s - 1))) continue;
            best = s;
          }
          return best;
        };
        let pos = from;
        for (;;) {
          const k = firstKeyword(pos);
          if (k < 0) return null;
          // A match holding the keyword at k starts in [k - width, k] and ends by k + width: search
          // only that window (one character of context each side), which keeps re2js's work small.
          const a = Math.max(pos, k - rule.width);
          const ws = Math.max(0, a - 1);
          const window = text.slice(ws, Math.min(text.length, k + rule.width + 2));
          re ??= compilePattern(rule.regex);
          const m = re.matcher(window);
          let q = a - ws;
          while (m.find(q)) {
            const start = m.start() + ws;
            if (start > k) break;
            const end = m.end() + ws;
            const lower = text.slice(start, end).toLowerCase();
            if (rule.keywords.some((kw) => lower.includes(kw))) {
              allows ??= [global, ...rule.allow.map(compileAllow)];
              return this.#candidate(rule, allows, m, ws, text);
            }
            q = m.start() + 1;
          }
          pos = k + 1;
        }
      },
    };
  }
}

let shared: SecretRules | null = null;
/** Compiled once per process: the rule set is fixed, compiling it takes a few milliseconds per rule. */
export function secretMatchers(): readonly SpanMatcher[] {
  shared ??= new SecretRules(GITLEAKS_RULES);
  return [...shared.matchers, jwtMatcher, pemMatcher];
}
