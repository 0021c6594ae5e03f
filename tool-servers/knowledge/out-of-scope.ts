/**
 * Questions the pages cannot answer whatever project they name, because of what pages are:
 * encyclopedic summaries checked on one date (`as_of`). They hold no live market data ("price of
 * eth right now", "lido apy today"), no contact details ("customer support number") and no
 * company records ("office address", "how many employees", "ceo salary"). Such a question still
 * shares the project's name and a word or two with a page, so the score alone would answer it
 * with a passage about something else; a model that then cites it is worse off than with none.
 * Live figures belong to the tools that fetch them (prices, chain state), not to this search.
 *
 * @example
 * outOfScope('what is the price of eth right now') // 'live market data'
 * outOfScope('how does the eth price oracle work') // undefined
 */
export function outOfScope(query: string): string | undefined {
  for (const [pattern, reason] of PATTERNS) if (pattern.test(query)) return reason;
  return undefined;
}

// A market figure with a time that makes it live; the figure alone ("how is the stETH price
// kept") asks how something works.
const FIGURE = String.raw`(price|prices|worth|apy|apr|yield|interest rate|rates?|gas|tvl|market cap|mcap)`;
const NOW = String.raw`(right now|now|today|tonight|tomorrow|currently|current|at the moment|atm|live|latest|this (week|month|year)|next (week|month|year))`;

const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [new RegExp(String.raw`\b${FIGURE}\b.*\b${NOW}\b|\b${NOW}\b.*\b${FIGURE}\b`, 'i'), 'live market data'],
  [/\bprice\s+(prediction|target|forecast)s?\b|\b(predict|forecast)\w*\b.*\bprice\b/i, 'live market data'],
  [
    /\b(customer|client)\s+(support|service|care)\b|\bsupport\s+(team|number|email|line|ticket|phone)\b|\b(phone|telephone)\s+number\b|\b(help\s?desk|helpline|hotline|call cent(er|re))\b|\bcontact\s+(them|number|email|details|info)\b|\bemail\s+address\b/i,
    'contact details',
  ],
  [
    /\b(office|offices|headquarters|headquartered|hq|employees?|headcount|staff\s+count|salary|salaries|net\s+worth|valuation|stock\s+price|ipo)\b|\bhow\s+many\s+(people|staff)\s+work\b/i,
    'company records',
  ],
];
