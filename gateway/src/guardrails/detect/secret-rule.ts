/** The shape of one vendored gitleaks rule, as scripts/gitleaks-rules.ts writes it. */
export interface GitleaksAllow {
  /** What the regexes test: the secret (capture) or the whole match. */
  target: 'secret' | 'match';
  regexes: string[];
  /** Lower-case words whose presence in the secret marks it as a placeholder. */
  stopwords: string[];
}

export interface GitleaksRule {
  id: string;
  /** Go RE2 syntax. */
  regex: string;
  /** Lower-case; the rule only runs where one occurs inside its match. */
  keywords: string[];
  /** Longest match in UTF-16 units. */
  width: number;
  /** Minimum Shannon entropy (bits per character) of the secret. */
  entropy?: number;
  secretGroup?: number;
  allow: GitleaksAllow[];
}
