/**
 * Aho-Corasick over lower-case ASCII keywords: one pass over a text finds every occurrence of every
 * keyword, case-insensitively, whatever the number of keywords. The secret rules use it as their
 * prefilter (a rule only runs where one of its keywords occurs).
 */
export class KeywordIndex {
  readonly #goto: Int32Array[] = [];
  readonly #fail: number[] = [];
  readonly #out: number[][] = [];
  readonly keywords: readonly string[];

  constructor(keywords: readonly string[]) {
    this.keywords = keywords;
    this.#node();
    keywords.forEach((kw, id) => {
      let s = 0;
      for (let i = 0; i < kw.length; i++) {
        const c = kw.charCodeAt(i) & 127;
        if (this.#goto[s]![c]! <= 0) this.#goto[s]![c] = this.#node();
        s = this.#goto[s]![c]!;
      }
      this.#out[s]!.push(id);
    });
    // Breadth-first: failure links, then a full transition table (root's missing edges stay at root).
    const queue: number[] = [];
    for (let c = 0; c < 128; c++) {
      const t = this.#goto[0]![c]!;
      if (t > 0) {
        this.#fail[t] = 0;
        queue.push(t);
      } else this.#goto[0]![c] = 0;
    }
    while (queue.length > 0) {
      const s = queue.shift()!;
      for (let c = 0; c < 128; c++) {
        const t = this.#goto[s]![c]!;
        const viaFail = this.#goto[this.#fail[s]!]![c]!;
        if (t > 0) {
          this.#fail[t] = viaFail;
          this.#out[t]!.push(...this.#out[viaFail]!);
          queue.push(t);
        } else this.#goto[s]![c] = viaFail;
      }
    }
  }

  #node(): number {
    this.#goto.push(new Int32Array(128).fill(-1));
    this.#fail.push(0);
    this.#out.push([]);
    return this.#goto.length - 1;
  }

  /** Calls `hit(keywordId, start)` for every occurrence, in order of where it ends. */
  scan(text: string, hit: (id: number, start: number) => void): void {
    let s = 0;
    const g = this.#goto;
    for (let i = 0; i < text.length; i++) {
      let c = text.charCodeAt(i);
      if (c >= 128) {
        s = 0;
        continue;
      }
      if (c >= 65 && c <= 90) c += 32;
      s = g[s]![c]!;
      const out = this.#out[s]!;
      for (let k = 0; k < out.length; k++) hit(out[k]!, i + 1 - this.keywords[out[k]!]!.length);
    }
  }
}
