import type { Hit, SpanMatcher } from './types.ts';

/**
 * A HEURISTIC prompt-injection detector: it scores phrasings that injection and jailbreak attempts
 * commonly use and fires when the sum reaches the rule's threshold (0 to 1; default 0.5). It knows
 * nothing of meaning: paraphrases, other languages and encodings get past it, and a text that
 * quotes these phrases (an article about jailbreaks) trips it. Use it to flag, with `monitor`, or
 * as one layer beside a webhook to a real classifier.
 */
const S = '\\s{1,3}';
const PHRASES: { source: string; weight: number }[] = [
  {
    source: `(?:ignore|disregard|forget|override|bypass)${S}(?:all${S}|any${S}|the${S}|your${S}|my${S})?(?:previous|prior|above|earlier|preceding|original|initial|system)${S}(?:instructions|prompts?|rules|directions|guidelines|messages|context)`,
    weight: 0.6,
  },
  {
    source: `(?:reveal|print|show|repeat|output|display|leak|tell${S}me)${S}(?:your|the)${S}(?:system${S}prompt|initial${S}(?:prompt|instructions)|hidden${S}(?:prompt|instructions)|instructions${S}above)`,
    weight: 0.5,
  },
  {
    source: `you${S}are${S}now${S}(?:dan|in${S}developer${S}mode|jailbroken|unrestricted|unfiltered|free${S}from)`,
    weight: 0.5,
  },
  {
    source: `(?:do${S}anything${S}now|developer${S}mode${S}(?:enabled|on)|dan${S}mode|jailbreak(?:ed)?)`,
    weight: 0.35,
  },
  {
    source: `(?:pretend${S}(?:you${S}are|to${S}be)|act${S}as${S}(?:if${S}you${S}(?:are|were)|an?))${S}(?:an?${S})?(?:unfiltered|unrestricted|uncensored|evil|rogue)`,
    weight: 0.4,
  },
  {
    source: `(?:without|no)${S}(?:any${S})?(?:restrictions|filters|censorship|limitations|guidelines|safety)`,
    weight: 0.25,
  },
  { source: `new${S}(?:system${S})?instructions\\s{0,3}:`, weight: 0.3 },
  { source: `(?:<\\|im_start\\|>\\s{0,3}system|\\[system\\]|###${S}system|<system>)`, weight: 0.4 },
  { source: `stay${S}in${S}character`, weight: 0.2 },
];
const WIDTH = 160;

const ANY = new RegExp(`(?<![\\w])(?:${PHRASES.map((p) => p.source).join('|')})(?![\\w])`, 'gi');
const EACH = PHRASES.map((p) => ({ re: new RegExp(`^(?:${p.source})$`, 'i'), weight: p.weight }));

export const injectionMatcher: SpanMatcher = {
  reach: WIDTH + 1,
  behind: 1,
  next(text: string, from: number) {
    ANY.lastIndex = from;
    const m = ANY.exec(text);
    if (m === null) return null;
    const start = m.index;
    const end = start + m[0].length;
    return { start, end, hits: [{ start, end }] };
  },
};

export function injectionWeight(hit: Hit, text: string): number {
  const phrase = text.slice(hit.start, hit.end);
  let w = 0;
  for (const p of EACH) if (p.re.test(phrase)) w = Math.max(w, p.weight);
  return w;
}
