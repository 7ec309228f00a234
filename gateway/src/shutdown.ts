import type { Logger } from 'pino';

/**
 * The grace period of a stopping gateway, spent step by step. Each step runs until it finishes or
 * its share of the time is up; a step that runs out is abandoned and named in the log, so a stop
 * ends within its grace period whatever its dependencies (Redis, a provider) are doing.
 */
export class ShutdownClock {
  readonly #logger: Logger;
  readonly #started = performance.now();
  readonly #deadline: number;
  readonly abandoned: string[] = [];

  constructor(logger: Logger, graceMs: number) {
    this.#logger = logger;
    this.#deadline = this.#started + graceMs;
  }

  /** Milliseconds left of the grace period. */
  remaining(): number {
    return Math.max(0, this.#deadline - performance.now());
  }

  /**
   * Runs `run` with the time it may take: what is left, less `keepMs` for the steps after it.
   * Resolves when it finished (true) or was abandoned (false); it never throws.
   */
  async step(name: string, run: (budgetMs: number) => Promise<unknown>, keepMs = 0): Promise<boolean> {
    const budgetMs = Math.max(0, Math.floor(this.remaining() - keepMs));
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      run(budgetMs).then(
        () => 'done' as const,
        (err: unknown) => {
          this.#logger.warn({ msg: `shutdown: ${name} failed`, err: String(err) });
          return 'done' as const;
        },
      ),
      new Promise<'late'>((resolve) => {
        timer = setTimeout(() => resolve('late'), budgetMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome === 'done') return true;
    this.abandoned.push(name);
    this.#logger.warn({ msg: `shutdown: ${name} did not finish within ${budgetMs} ms; abandoned` });
    return false;
  }

  /** Time since the stop began. */
  elapsedMs(): number {
    return Math.round(performance.now() - this.#started);
  }
}
