// Numbers a double cannot hold keep their text through documents (lib/exact-json.ts); everything
// else takes the fast path through JSON.parse, also when strings hold digits and letters.
import { parseExact, stringifyExact } from '../src/lib/exact-json';

describe('parseExact', () => {
  it.each([
    ['{"a":12345678901234567890123}', '12345678901234567890123'],
    ['{"a":0.1000000000000000055511151231257827}', '0.1000000000000000055511151231257827'],
    ['{"a":12345678.123456789}', '12345678.123456789'],
    ['{"a":"1e5","b":[1e400]}', '1e400'],
  ])('keeps %s exact', (text, number) => {
    const { value, exact } = parseExact(text);
    expect(exact).toBe(true);
    expect(stringifyExact(value)).toContain(number);
  });

  it.each([
    '{"id":"01M88ABZTHM1YC5Y7ZPDK09M7X","n":"12345678901234567890"}',
    '{"t":true,"f":false,"z":null,"n":[1.5,-2,123456789012345]}',
    '{"q":"say \\"1e5\\" twice"}',
    '[1e2]',
  ])('reads %s with plain numbers', (text) => {
    const { value, exact } = parseExact(text);
    expect(value).toEqual(JSON.parse(text));
    expect(exact).toBe(false);
    expect(JSON.stringify(value)).not.toContain('isLosslessNumber');
  });
});
