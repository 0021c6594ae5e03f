import type { Logger } from '../kit/index.js';

/** What a tool that asks providers in turn needs besides the providers. */
export interface FallbackChainOptions {
  /** Time for the whole chain of providers (WEB_FALLBACK_DEADLINE_MS), within the gateway's tool timeout. */
  deadlineMs: number;
  logger?: Logger;
}
