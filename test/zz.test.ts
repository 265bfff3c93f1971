import { tls_audit } from '../src/engine/kinds/tls_audit';
import https from 'node:https';
import { chainPem, makeCa, makeIntermediate, makeLeaf } from './support/certs';
test('d', async () => {
  const ca = makeCa(); const int = makeIntermediate(ca); const leaf = makeLeaf(int, { names: ['localhost'], keyBits: 512 });
  const s = https.createServer({ key: leaf.key, cert: chainPem(leaf, int), ciphers: 'DEFAULT:@SECLEVEL=0' }, (q, r) => r.end('x'));
  s.on('tlsClientError', (e) => console.log('server', e.message));
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const r = await tls_audit.check({ host: 'localhost', port: (s.address() as any).port }, { monitorId: 'm', intervalSeconds: 60, now: new Date(), signal: AbortSignal.timeout(20000), net: { allowPrivate: true, extraCa: [ca.cert] } });
  console.log(JSON.stringify(r, null, 1));
  s.close();
});
