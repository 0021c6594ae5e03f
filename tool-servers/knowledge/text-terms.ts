/**
 * How text becomes search terms, shared by indexing and querying so both sides agree:
 * split on anything that is not a letter or digit, lower-case, drop stop words, then apply a
 * light suffix stemmer ("staking", "staked", "stakes" → "stak"). A full Porter stemmer would
 * merge more forms, but this small one is predictable and keeps token symbols ("stETH", "UNI",
 * "MKR") intact, which matter more here than rare inflections.
 */

// Function words and question scaffolding: they say nothing about which passage answers.
const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each either else ever every few for from further get gets got had has have having he her ' +
    'here hers him his how i if in into is it its itself just let like me might more most much must my myself no nor not now of off on once ' +
    'one only or other our ours out over own per please same say says she should so some such tell than that the their theirs them then there ' +
    'these they this those through to too under until up us use used using very via want was way we well were what whats when where whether ' +
    'which while who whom whose why will with within without would yes yet you your yours ' +
    // contractions typed without the apostrophe ("whos behind base") or split at it ("doesn't" → "doesn", "t")
    'whos hows wheres whens whys im ive dont don doesnt doesn didnt didn isnt isn arent aren cant wont thats theres ' +
    // scaffolding of casual questions ("what happened with", "how often", "what does it actually
    // do", "a token or nah"): fillers that say nothing a page could match
    'happen happens happened often actually really basically exactly literally nah yeah yep yup nope okay ok lol ' +
    'bro guys hey hi thanks thx pls plz tho anyway anyways kinda sorta gonna wanna btw ' +
    // link noise: URLs are indexed as words, their scheme and top-level domains are not content
    'http https www com org io xyz'
  ).split(' '),
);

// Tried in order; the first suffix whose removal leaves a stem of at least MIN_STEM letters wins.
// No "ly": it would turn "daily" into "dai".
const SUFFIXES = ['ings', 'ing', 'ions', 'ion', 'ers', 'er', 'ed', 'es', 's'] as const;
const MIN_STEM = 3;

/** Split text into raw words (letters and digits), keeping their case. */
export function tokenize(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u).filter((word) => word.length > 0);
}

/**
 * Turn one raw word into its search term, or null for a stop word or a lone character.
 *
 * @example
 * normalizeTerm('Staking') // 'stak'
 * normalizeTerm('the')     // null
 * normalizeTerm('stETH')   // 'steth'
 */
export function normalizeTerm(word: string): string | null {
  const lower = word.toLowerCase();
  if (lower.length < 2 || STOP_WORDS.has(lower)) return null;
  return stem(lower);
}

/** The distinct search terms of a text, in order of first appearance. */
export function queryTerms(text: string): string[] {
  const terms = new Set<string>();
  for (const word of tokenize(text)) {
    const term = normalizeTerm(word);
    if (term) terms.add(term);
  }
  return [...terms];
}

function stem(word: string): string {
  if (word.length <= MIN_STEM || /\d/.test(word)) return word;
  let result = word;
  if (result.endsWith('ies') && result.length - 3 >= MIN_STEM - 1) {
    result = `${result.slice(0, -3)}i`;
  } else {
    for (const suffix of SUFFIXES) {
      if (!result.endsWith(suffix) || result.length - suffix.length < MIN_STEM) continue;
      // "address" keeps its double s; "addresses" loses only "es".
      if (suffix === 's' && result.endsWith('ss')) break;
      result = result.slice(0, -suffix.length);
      // "swapping" → "swapp" → "swap", so it meets "swap".
      if (suffix !== 's' && /([^aeiouls])\1$/.test(result)) result = result.slice(0, -1);
      break;
    }
  }
  // "stake" and "staking" meet at "stak"; "supply" and "suppliers" at "suppli".
  if (result.endsWith('e') && result.length - 1 >= MIN_STEM) result = result.slice(0, -1);
  else if (result.endsWith('y') && result.length > MIN_STEM) result = `${result.slice(0, -1)}i`;
  return result;
}
