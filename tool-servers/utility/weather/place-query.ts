import { US_STATE_NAMES } from './us-states.js';

/** What a user typed as a place: the name to search and the qualifiers after it. */
export interface PlaceQuery {
  /** The part before the first comma: "Austin" in "Austin, Texas". */
  name: string;
  /** Each comma-separated part after the name: ["Texas"], ["TX", "USA"], ["FR"]. */
  qualifiers: string[];
}

/** The fields of a geocoding result that qualifiers are compared against. */
export interface PlaceCandidate {
  country?: string;
  countryCode?: string;
  admin1?: string;
  population?: number;
}

// Common ways of naming a country that are neither its ISO code nor Open-Meteo's English name.
const COUNTRY_ALIASES: ReadonlyMap<string, string> = new Map([
  ['usa', 'us'],
  ['united states of america', 'us'],
  ['america', 'us'],
  ['uk', 'gb'],
  ['britain', 'gb'],
  ['great britain', 'gb'],
]);

/** Lower case, accents off, dots dropped: "Île-de-France" → "ile-de-france", "U.S.A." → "usa". */
function fold(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').replace(/\./g, '').replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * Split "City, Region, Country" into the name Open-Meteo can search (it matches names only and
 * finds nothing for "Austin, Texas") and the qualifiers that choose among same-named places.
 *
 * @example
 *   parsePlaceQuery('Austin, Texas') // { name: 'Austin', qualifiers: ['Texas'] }
 */
export function parsePlaceQuery(text: string): PlaceQuery {
  const [name, ...rest] = text.split(',').map((part) => part.trim());
  return { name, qualifiers: rest.filter(Boolean) };
}

function matchesQualifier(candidate: PlaceCandidate, qualifier: string): boolean {
  const q = fold(qualifier);
  const admin1 = candidate.admin1 ? fold(candidate.admin1) : undefined;
  const country = candidate.country ? fold(candidate.country) : undefined;
  const code = candidate.countryCode ? fold(candidate.countryCode) : undefined;
  if (q === admin1 || q === country || q === code) return true;
  if (code !== undefined && COUNTRY_ALIASES.get(q) === code) return true;
  // "TX": a state abbreviation, for places in the US only ("CA" may also be Canada, matched above).
  return code === 'us' && admin1 !== undefined && US_STATE_NAMES.get(q) === admin1;
}

/**
 * The place a query means among geocoding results for its name: of those matching every
 * qualifier (region, country name, ISO country code, US state abbreviation; case and accents
 * ignored), the most populous. Undefined when qualifiers were given and no result matches them,
 * since answering for another place of the same name would be wrong, not merely imprecise.
 *
 * @example
 *   pickPlace(dovers, []) // the most populous Dover
 *   pickPlace(dovers, ['NH']) // Dover, New Hampshire
 */
export function pickPlace<T extends PlaceCandidate>(candidates: readonly T[], qualifiers: readonly string[]): T | undefined {
  let best: T | undefined;
  for (const candidate of candidates) {
    if (!qualifiers.every((qualifier) => matchesQualifier(candidate, qualifier))) continue;
    // Strictly greater keeps the provider's own order among equals (and among unknown populations).
    if (best === undefined || (candidate.population ?? 0) > (best.population ?? 0)) best = candidate;
  }
  return best;
}
