import { typesOf } from '../src/domain/search';

test('a `type` naming an inherited property of an object is unknown (400), not silently no type', () => {
  for (const t of ['constructor', '__proto__', 'hasOwnProperty', 'monitor,constructor']) {
    expect(() => typesOf(t)).toThrow(expect.objectContaining({ status: 400, code: 'unknown_search_type' }));
  }
  expect(typesOf('Status-Pages,monitors')).toEqual(['monitor', 'status_page']);
});
