/**
 * PageRange on a provider played by a function: a refused range halves until it fits, a run of
 * pages that fit doubles it again up to the most, a doubling refused at once makes the next wait
 * twice as long (and one that fits brings the first pace back), failures that are no range cap
 * are thrown as they are, and readers sharing one range move it only by answers to the size in force.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PageRange } from '../../chains/page-range.js';

/** What providers answer to a range over their cap (EIP-1474's "limit exceeded"). */
const refusal = () => Object.assign(new Error('query exceeds max block range'), { code: -32005 });

/** A provider that takes at most `cap` blocks a call (the cap may change), recording each call's size. */
class Provider {
  readonly asked: number[] = [];
  constructor(public cap: number) {}
  readonly read = async (start: number, end: number): Promise<number> => {
    const size = end - start + 1;
    this.asked.push(size);
    if (size > this.cap) throw refusal();
    return size;
  };
}

/** Read `pages` pages from block 0 on, each as large as the range allows. */
async function readPages(range: PageRange, read: (start: number, end: number) => Promise<unknown>, pages: number): Promise<void> {
  let start = 0;
  for (let i = 0; i < pages; i++) start = (await range.page(start, 1_000_000, read)).end + 1;
}

test('a refused range halves until a page fits, and that page is the one answered', async () => {
  const range = new PageRange(64);
  const capped = new Provider(10);
  const page = await range.page(100, 1_000, capped.read);
  assert.deepEqual(capped.asked, [64, 32, 16, 8]);
  assert.deepEqual(page, { end: 107, result: 8 });
  assert.equal(range.size, 8);
});

test('the last page stops at the end of the range asked for', async () => {
  const range = new PageRange(64);
  const open = new Provider(Infinity);
  assert.deepEqual(await range.page(90, 99, open.read), { end: 99, result: 10 });
});

test('after four pages in a row fit the size doubles, up to the most', async () => {
  const range = new PageRange(64);
  const provider = new Provider(10);
  await readPages(range, provider.read, 1); // down to 8
  provider.cap = Infinity; // the fallback moved to a provider without a cap
  provider.asked.length = 0;
  await readPages(range, provider.read, 15);
  assert.deepEqual(provider.asked, [8, 8, 8, 16, 16, 16, 16, 32, 32, 32, 32, 64, 64, 64, 64]);
  assert.equal(range.size, 64);
});

test('a doubling refused at once waits twice as many pages before the next; one that fits brings the first pace back', async () => {
  const range = new PageRange(64);
  const provider = new Provider(10);
  await readPages(range, provider.read, 13);
  // 4 pages of 8, then 16 refused: 8 pages of 8 before the next try, which is refused again.
  assert.deepEqual(provider.asked, [64, 32, 16, 8, 8, 8, 8, 16, 8, 8, 8, 8, 8, 8, 8, 8, 16, 8]);
  provider.asked.length = 0;
  provider.cap = Infinity;
  await readPages(range, provider.read, 15 + 5);
  // 15 more pages of 8 (16 wait now), then 16 fits: back to doubling after 4.
  assert.deepEqual(provider.asked, [...Array(15).fill(8), 16, 16, 16, 16, 32]);
});

test('a failure that is no range cap is thrown at once and leaves the size alone', async () => {
  const range = new PageRange(64);
  const down = new Error('fetch failed');
  let calls = 0;
  await assert.rejects(
    range.page(0, 1_000, async () => {
      calls++;
      throw down;
    }),
    (err) => err === down,
  );
  assert.equal(calls, 1);
  assert.equal(range.size, 64);
});

test('a refusal of a single block is something else, and is thrown', async () => {
  const range = new PageRange(4);
  const never = new Provider(0);
  await assert.rejects(range.page(0, 1_000, never.read), /query exceeds max block range/);
  assert.deepEqual(never.asked, [4, 2, 1]);
});

test('readers sharing one range: a late answer to an older size moves nothing', async () => {
  const range = new PageRange(64);
  /** Each call's answer, given by the test in the order it chooses. */
  const calls: Array<{ size: number; answer: (refused: boolean) => void }> = [];
  let called: () => void = () => {};
  const read = (start: number, end: number) =>
    new Promise<number>((resolve, reject) => {
      const size = end - start + 1;
      calls.push({ size, answer: (refused) => (refused ? reject(refusal()) : resolve(size)) });
      called();
    });
  const nextCall = () => new Promise<void>((resolve) => (called = resolve));

  let asked = nextCall();
  const first = range.page(0, 1_000, read);
  await asked;
  asked = nextCall();
  const second = range.page(0, 1_000, read);
  await asked;
  assert.deepEqual(
    calls.map((c) => c.size),
    [64, 64],
  );

  asked = nextCall();
  calls[0].answer(true); // the first reader's refusal halves the range
  await asked;
  assert.equal(range.size, 32);
  asked = nextCall();
  calls[1].answer(true); // the second's, late, was for 64: asked again at 32, not halved to 16
  await asked;
  assert.equal(range.size, 32);
  assert.deepEqual(
    calls.map((c) => c.size),
    [64, 64, 32, 32],
  );
  calls[2].answer(false);
  calls[3].answer(false);
  assert.deepEqual(await Promise.all([first, second]), [
    { end: 31, result: 32 },
    { end: 31, result: 32 },
  ]);
});
