/**
 * Space calls at least `intervalMs` apart within this process (MusicBrainz allows one request
 * per second per client and answers 503 above that). Callers queue for the next free slot.
 *
 * @example
 *   const pace = createMinInterval(1000)
 *   await pace(signal) // resolves at once, the next call one second later
 */
export function createMinInterval(intervalMs: number): (signal: AbortSignal) => Promise<void> {
  let nextSlot = 0;
  return (signal) => {
    const now = Date.now();
    const slot = Math.max(now, nextSlot);
    nextSlot = slot + intervalMs;
    const wait = slot - now;
    if (wait === 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      }, wait);
      const onAbort = () => {
        clearTimeout(timer);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
    });
  };
}
