import type { GuardStore } from '../spend/store.ts';
import type { RuntimeState } from '../state/types.ts';

/** What the console's pages read beside the ordinary APIs: spend counters and the request log. */
export interface ConsoleWebReads {
  guard: GuardStore;
  state: RuntimeState;
}
