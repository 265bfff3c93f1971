import { withoutCredentials } from '../src/export/entities/monitors';

test('a URL loses its userinfo and the values of query parameters named like a credential, camelCase included', () => {
  const out = withoutCredentials('https://u:p@x.example/h?region=eu&api_key=A1&accessToken=B2&apiKey=C3&clientSecret=D4&X-Amz-Signature=E5&monkey=ok');
  for (const secret of ['u:p', 'A1', 'B2', 'C3', 'D4', 'E5']) expect(out).not.toContain(secret);
  const q = new URL(out).searchParams;
  expect(q.get('region')).toBe('eu');
  expect(q.get('monkey')).toBe('ok');
  expect(q.get('accessToken')).toBe('redacted');
  expect(withoutCredentials('https://x.example/h?tokenizer=1')).toBe('https://x.example/h?tokenizer=1');
});
