import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePlaceQuery, pickPlace } from '../../../../tool-servers/utility/weather/place-query.js';

const PORTLANDS = [
  { id: 'me', country: 'United States', countryCode: 'US', admin1: 'Maine', population: 66882 },
  { id: 'or', country: 'United States', countryCode: 'US', admin1: 'Oregon', population: 652503 },
  { id: 'au', country: 'Australia', countryCode: 'AU', admin1: 'Victoria', population: 9712 },
  { id: 'unknown', country: 'Jamaica', countryCode: 'JM' },
];

describe('place queries', () => {
  test('the name is the part before the first comma; empty parts are dropped', () => {
    assert.deepEqual(parsePlaceQuery('Austin, Texas'), { name: 'Austin', qualifiers: ['Texas'] });
    assert.deepEqual(parsePlaceQuery(' Austin ,TX, , USA '), { name: 'Austin', qualifiers: ['TX', 'USA'] });
    assert.deepEqual(parsePlaceQuery('Berlin'), { name: 'Berlin', qualifiers: [] });
    assert.deepEqual(parsePlaceQuery(', Texas'), { name: '', qualifiers: ['Texas'] });
  });

  const cases: Array<[string[], string | undefined]> = [
    [[], 'or'],
    [['Maine'], 'me'],
    [['maine'], 'me'],
    [['ME'], 'me'],
    [['OR', 'U.S.A.'], 'or'],
    [['United States'], 'or'],
    [['us'], 'or'],
    [['Australia'], 'au'],
    [['AU'], 'au'],
    [['JM'], 'unknown'],
    [['Victoria', 'US'], undefined],
    [['Texas'], undefined],
    // A state abbreviation names a US place only.
    [['VI'], undefined],
  ];
  for (const [qualifiers, expected] of cases) {
    test(`qualifiers ${JSON.stringify(qualifiers)} pick ${expected ?? 'nothing'}`, () => {
      assert.equal(pickPlace(PORTLANDS, qualifiers)?.id, expected);
    });
  }

  test('with equal or unknown populations the provider order decides', () => {
    const unranked: Array<{ id: string; population?: number }> = [{ id: 'a' }, { id: 'b' }, { id: 'c', population: 0 }];
    assert.equal(pickPlace(unranked, [])?.id, 'a');
    assert.equal(pickPlace(unranked.slice(0, 0), []), undefined);
  });
});
