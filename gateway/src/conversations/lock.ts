import { randomUUID } from 'node:crypto';
import { GatewayError } from '../errors/index.ts';
import { guarded } from './turn.ts';
import type { ConversationStore } from './types.ts';

/** How long a lock lives without renewal: a killed holder's conversation is free again after this. */
const LOCK_TTL_MS = 15_000;
/** How often the holder renews it. */
const RENEW_MS = 5_000;
/** How often a waiting request tries again. */
const RETRY_MS = 25;
/** The longest a lock is renewed: a holder that never gives it back (a bug) frees it this much later. */
const MAX_HOLD_MS = 15 * 60_000;
/** How long a request waits for a turn on the conversation before it is refused. */
export const LOCK_WAIT_MS = 60_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Gives the lock back (never throws: a lock that cannot be freed expires). */
export type Unlock = () => Promise<void>;

/**
 * Takes a conversation's turn lock for one request on `POST /v1/responses`: from reading its items to
 * appending the turn, one request at a time per conversation, across every gateway process, so each
 * turn is answered with every turn appended before it. A second request waits its turn (up to
 * `waitMs`, then 409 `conversation_locked`). The holder renews the lock while it runs; a holder that
 * dies leaves it to expire.
 */
export async function lockConversation(
  store: ConversationStore,
  projectId: string,
  id: string,
  waitMs = LOCK_WAIT_MS,
): Promise<Unlock> {
  const token = randomUUID();
  const until = Date.now() + waitMs;
  while (!(await guarded(store.tryLock(projectId, id, token, LOCK_TTL_MS)))) {
    if (Date.now() >= until)
      throw new GatewayError(
        'conversation_locked',
        'Another request is currently operating on this conversation. Please retry in a few seconds.',
        { param: 'conversation', retryAfterSeconds: 2 },
      );
    await sleep(RETRY_MS);
  }
  const stopAt = Date.now() + MAX_HOLD_MS;
  const renew = setInterval(() => {
    if (Date.now() > stopAt) clearInterval(renew);
    else store.renewLock(projectId, id, token, LOCK_TTL_MS).catch(() => undefined);
  }, RENEW_MS);
  renew.unref();
  return async () => {
    clearInterval(renew);
    await store.unlock(projectId, id, token).catch(() => undefined);
  };
}
