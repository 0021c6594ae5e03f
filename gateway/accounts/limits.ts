/** The accounts' fixed bounds, shared by the routes, the CLI and the stores. */

/**
 * Active keys one wallet may hold. In free mode anyone can mint for any wallet: without a cap one
 * wallet's keys could grow without end.
 */
export const MAX_KEYS_PER_WALLET = 100;

/** The largest single grant (admin API and CLI): far above any real top-up, far below 2^53. */
export const MAX_GRANT = 1_000_000_000_000;
