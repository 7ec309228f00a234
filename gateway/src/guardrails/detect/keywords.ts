/**
 * Aho-Corasick over lower-case ASCII keywords: one pass over a text finds every occurrence of every
 * keyword, case-insensitively, whatever the number of keywords. The secret rules use it as their
 * prefilter (a rule only runs where one of its keywords occurs). The automaton is a flat transition
 * table (128 ASCII columns per state), so the scan is one array read per character.
 */
export class KeywordIndex {
  readonly keywords: readonly string[];
  #goto: Int32Array;
  readonly #out: number[][] = [];
  #hasOut = new Uint8Array(0);
  #states = 0;

  constructor(keywords: readonly string[]) {
    this.keywords = keywords;
    const maxStates = keywords.reduce((n, k) => n + k.length, 1);
    this.#goto = new Int32Array(maxStates * 128).fill(-1);
    const fail: number[] = [];
    this.#node(fail);
    keywords.forEach((kw, id) => {
      let s = 0;
      for (let i = 0; i < kw.length; i++) {
        const c = kw.charCodeAt(i) & 127;
        if (this.#goto[s * 128 + c]! <= 0) this.#goto[s * 128 + c] = this.#node(fail);
        s = this.#goto[s * 128 + c]!;
      }
      this.#out[s]!.push(id);
    });
    // Breadth-first: failure links, then a full transition table (root's missing edges stay at root).
    const queue: number[] = [];
    for (let c = 0; c < 128; c++) {
      const t = this.#goto[c]!;
      if (t > 0) {
        fail[t] = 0;
        queue.push(t);
      } else this.#goto[c] = 0;
    }
    for (let q = 0; q < queue.length; q++) {
      const s = queue[q]!;
      for (let c = 0; c < 128; c++) {
        const t = this.#goto[s * 128 + c]!;
        const viaFail = this.#goto[fail[s]! * 128 + c]!;
        if (t > 0) {
          fail[t] = viaFail;
          this.#out[t]!.push(...this.#out[viaFail]!);
          queue.push(t);
        } else this.#goto[s * 128 + c] = viaFail;
      }
    }
    this.#goto = this.#goto.slice(0, this.#states * 128);
    this.#hasOut = Uint8Array.from(this.#out, (o) => (o.length > 0 ? 1 : 0));
  }

  #node(fail: number[]): number {
    fail.push(0);
    this.#out.push([]);
    return this.#states++;
  }

  /** Calls `hit(keywordId, start)` for every occurrence, in order of where it ends. */
  scan(text: string, hit: (id: number, start: number) => void): void {
    let s = 0;
    const g = this.#goto;
    const hasOut = this.#hasOut;
    const n = text.length;
    for (let i = 0; i < n; i++) {
      let c = text.charCodeAt(i);
      if (c >= 128) {
        s = 0;
        continue;
      }
      if (c >= 65 && c <= 90) c += 32;
      s = g[(s << 7) | c]!;
      if (hasOut[s] === 1) for (const id of this.#out[s]!) hit(id, i + 1 - this.keywords[id]!.length);
    }
  }
}
