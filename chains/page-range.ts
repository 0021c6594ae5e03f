/**
 * How many blocks one `eth_getLogs` call asks for. It starts at the most allowed and halves when
 * a provider refuses a range. A halved range need not stay small: the fallback transport may have
 * moved to a provider without that cap, and a cap on results ("more than 10,000 logs") depends on
 * the blocks. So after GROW_AFTER_PAGES pages in a row fit, the range doubles again, up to the
 * most. A doubling refused at once says the cap is fixed: the next try waits twice as many pages
 * (up to MAX_GROW_AFTER_PAGES). A doubling that fits says the cap is gone: back to the first pace.
 * Several readers may share one PageRange (the x402 searches of one RPC URL): only an answer to
 * the size in force changes it, so a late answer to an older size moves nothing. Each pager owns
 * its range (a deposit watcher per chain, x402 per asset RPC), beside the ChainClient it reads
 * through (chain-client.ts).
 *
 * @example
 *   const range = new PageRange(1_000)
 *   for (let start = from; start <= head; ) {
 *     const { end, result: logs } = await range.page(start, head, (fromBlock, toBlock) => getLogs(fromBlock, toBlock))
 *     start = end + 1
 *   }
 */
export class PageRange {
  /** Blocks per call now. */
  size: number;
  /** Pages in a row that fit since the size last changed. */
  private fittedInRow = 0;
  /** Pages in a row that must fit before the size doubles. */
  private growAfter = GROW_AFTER_PAGES;
  /** The last size change was a doubling, and no page has been tried at it yet. */
  private justGrew = false;

  constructor(private readonly most: number) {
    this.size = most;
  }

  /**
   * Read the page of [start, to] that begins at `start`, as many blocks as the size allows:
   * `read(start, end)` answers it. A refused range (isRangeTooLarge) is asked again, smaller; at
   * one block the refusal is something else and is thrown. Resolves with the page's last block.
   */
  async page<T>(start: number, to: number, read: (start: number, end: number) => Promise<T>): Promise<{ end: number; result: T }> {
    for (;;) {
      const asked = this.size;
      const end = Math.min(to, start + asked - 1);
      try {
        const result = await read(start, end);
        if (this.size === asked) this.fitted();
        return { end, result };
      } catch (err) {
        if (!isRangeTooLarge(err)) throw err;
        // Another reader already made it smaller: ask again at the new size.
        if (this.size === asked && !this.refused()) throw err;
      }
    }
  }

  /** A provider refused the size: halve it. False when it is 1 already (the refusal is something else). */
  private refused(): boolean {
    if (this.size === 1) return false;
    if (this.justGrew) this.growAfter = Math.min(this.growAfter * 2, MAX_GROW_AFTER_PAGES);
    this.justGrew = false;
    this.size = Math.max(1, Math.floor(this.size / 2));
    this.fittedInRow = 0;
    return true;
  }

  /** A page of the current size was answered. */
  private fitted(): void {
    if (this.justGrew) this.growAfter = GROW_AFTER_PAGES;
    this.justGrew = false;
    if (this.size >= this.most || ++this.fittedInRow < this.growAfter) return;
    this.size = Math.min(this.most, this.size * 2);
    this.fittedInRow = 0;
    this.justGrew = true;
  }
}

const GROW_AFTER_PAGES = 4;
const MAX_GROW_AFTER_PAGES = 64;

/** How providers word a cap on one eth_getLogs call (its block range, or the logs it may return). */
const RANGE_CAP =
  /block range|range (is )?too (large|wide|big)|max(imum)? (block )?range|range \d+ (exceeds|is bigger than) (the )?(range )?limit|limited to an? [\d,]+ (block )?range|more than \d+ (results|logs)|too many (results|logs|blocks)|query exceeds|response size/i;

/**
 * Not a range cap, whatever the code: a rate limit (Infura answers one with -32005 too: "project ID
 * request rate exceeded", "daily request count exceeded, request rate limited"), or a backend behind
 * the head ("block range extends beyond current head block": fewer blocks do not help, a later pass does).
 */
const NOT_A_RANGE_CAP = /rate limit|request rate|rate exceeded|request count exceeded|too many requests|beyond (the )?current head/i;

/**
 * Whether an eth_getLogs failure means "ask for fewer blocks": providers cap the range or the
 * result size, each in its own words and code (Infura -32602 "range 1000000 exceeds limit of
 * 10000" or -32005 "query returned more than 10000 results", QuickNode -32614 "eth_getLogs is
 * limited to a 10,000 range", Tenderly's in `data`, public BSC nodes a bare -32005 "limit
 * exceeded": EIP-1474's code for it). A rate limit is not a range cap, even under -32005.
 */
export function isRangeTooLarge(err: unknown): boolean {
  type Layer = { code?: unknown; message?: unknown; details?: unknown; data?: unknown; cause?: unknown };
  const layers: Layer[] = [];
  for (let e = err as Layer | undefined; e && layers.length < 10; e = e.cause as Layer | undefined) layers.push(e);
  const texts = layers.map((e) => `${String(e.message ?? '')} ${String(e.details ?? '')} ${dataText(e.data)}`);
  if (texts.some((text) => NOT_A_RANGE_CAP.test(text))) return false;
  return layers.some((e) => e.code === -32005) || texts.some((text) => RANGE_CAP.test(text));
}

/** An error's `data` as text (Tenderly puts its words there); never throws. */
function dataText(data: unknown): string {
  if (data === undefined) return '';
  try {
    return JSON.stringify(data) ?? '';
  } catch {
    return String(data);
  }
}
