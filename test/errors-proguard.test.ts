import fs from 'node:fs';
import path from 'node:path';
import { originalClass, parseProguardMapping, retraceFrame, type ProguardMapping } from '../src/errors/symbols/proguard';

// ProGuard/R8 retracing (reference A6) against a hand-written mapping in R8's
// shape (header comments, sourceFile metadata, inline chains, ProGuard-style
// lines without original lines): pure functions, no server.

const FIXTURE = fs.readFileSync(path.join(__dirname, 'fixtures/symbols/android/mapping.txt'), 'utf8');
let m: ProguardMapping;
beforeAll(() => {
  m = parseProguardMapping(FIXTURE);
});

const frame = (module: string, fn: string, lineno: number | null) => ({ module, function: fn, lineno });

describe('line ranges', () => {
  test('a single-line range maps to its original line, with the sourceFile name', () => {
    expect(retraceFrame(m, frame('a.b', 'a', 13))).toEqual([
      { module: 'com.example.vigil.cache.LruCache', function: 'eldest', filename: 'LruCache.kt', lineno: 168 },
    ]);
  });

  test('a range with an original range of the same length is translated linearly', () => {
    for (const [min, orig] of [[14, 40], [15, 41], [16, 42]]) {
      expect(retraceFrame(m, frame('a.b', 'a', min))).toEqual([
        { module: 'com.example.vigil.cache.LruCache', function: 'get', filename: 'LruCache.kt', lineno: orig },
      ]);
    }
  });

  test('a range with a single original line maps every minified line to it', () => {
    expect(retraceFrame(m, frame('a.b', 'a', 18))![0]).toMatchObject({ function: 'trimToSize', lineno: 60 });
    // 20:22 -> 70:90 spans differently: not linear, so origStart as written.
    expect(retraceFrame(m, frame('a.b', 'a', 21))![0]).toMatchObject({ function: 'put', lineno: 70 });
  });

  test('the same obfuscated name is told apart by the line (R8 renames overloads alike)', () => {
    expect(retraceFrame(m, frame('a.b', 'a', 13))![0].function).toBe('eldest');
    expect(retraceFrame(m, frame('a.b', 'a', 19))![0].function).toBe('trimToSize');
    expect(retraceFrame(m, frame('a.b', '<init>', 3))).toEqual([
      { module: 'com.example.vigil.cache.LruCache', function: '<init>', filename: 'LruCache.kt', lineno: 14 },
    ]);
  });

  test('an original line 0 (R8: no line) becomes null', () => {
    expect(retraceFrame(m, frame('a.b', 'f', 1))).toEqual([
      { module: 'com.example.vigil.cache.LruCache', function: 'reset', filename: 'LruCache.kt', lineno: null },
    ]);
  });
});

describe('inline chains', () => {
  test('one frame becomes the chain, innermost first, with other classes named by the qualified name', () => {
    expect(retraceFrame(m, frame('a.b', 'a', 5))).toEqual([
      { module: 'com.example.vigil.cache.CacheEntry', function: 'touch', filename: 'CacheEntries.kt', lineno: 9 },
      { module: 'com.example.vigil.cache.LruCache$Node', function: 'promote', filename: 'LruCache.java', lineno: 31 },
      { module: 'com.example.vigil.cache.LruCache', function: 'get', filename: 'LruCache.kt', lineno: 44 },
    ]);
  });

  test('qualified names of classes absent from the mapping (lambda, JDK) derive their file name', () => {
    expect(retraceFrame(m, frame('a.c$a', 'b', 4))).toEqual([
      { module: 'example.Foo', function: 'lambda$main$0', filename: 'Foo.java', lineno: 225 },
      { module: 'example.Foo', function: 'run', filename: 'Foo.java', lineno: 2 },
      { module: 'com.example.vigil.net.HttpProbe$Result', function: 'report', filename: 'HttpProbe.java', lineno: 50 },
    ]);
  });

  test('an R8 metadata comment between chain lines does not break the chain', () => {
    expect(retraceFrame(m, frame('a.b', 'a', 23))).toEqual([
      { module: 'java.util.Objects', function: 'requireNonNull', filename: 'Objects.java', lineno: 220 },
      { module: 'com.example.vigil.cache.LruCache', function: 'remove', filename: 'LruCache.kt', lineno: 101 },
    ]);
  });
});

describe('methods without line information', () => {
  test('a ProGuard-style method without lines keeps the frame line (or null)', () => {
    expect(retraceFrame(m, frame('a.b', 'b', 7))).toEqual([
      { module: 'com.example.vigil.cache.LruCache', function: 'clear', filename: 'LruCache.kt', lineno: 7 },
    ]);
    expect(retraceFrame(m, frame('a.b', 'b', null))![0].lineno).toBeNull();
  });

  test('a minified range without an original line keeps the frame line', () => {
    expect(retraceFrame(m, frame('a.b', 'e', 33))![0]).toMatchObject({ function: 'size', lineno: 33 });
  });

  test('overloads without lines sharing one original name are not ambiguous', () => {
    const out = retraceFrame(m, frame('a.b', 'c', 12))!;
    expect(out).toEqual([{ module: 'com.example.vigil.cache.LruCache', function: 'evict', filename: 'LruCache.kt', lineno: 12 }]);
    expect(out[0].note).toBeUndefined();
  });

  test('candidates with different names: the first, with a note naming the others', () => {
    const out = retraceFrame(m, frame('a.b', 'd', null))!;
    expect(out).toHaveLength(1);
    expect(out[0]).toMatchObject({ module: 'com.example.vigil.cache.LruCache', function: 'onRemove', lineno: null });
    expect(out[0].note).toContain('onInsert');
  });

  test('a line outside every range still names the method, without a line', () => {
    const out = retraceFrame(m, frame('a.b$a', 'a', 99))!;
    expect(out).toEqual([{ module: 'com.example.vigil.cache.LruCache$Node', function: 'promote', filename: 'LruCache.java', lineno: null }]);
    // No line at all behaves the same.
    expect(retraceFrame(m, frame('a.b$a', 'a', null))).toEqual(out);
  });
});

describe('classes', () => {
  test('class-only mapping restores the class and keeps the method and line', () => {
    expect(retraceFrame(m, frame('a.c', 'run', 42))).toEqual([
      { module: 'com.example.vigil.net.HttpProbe', function: 'run', filename: 'HttpProbe.java', lineno: 42 },
    ]);
  });

  test('file names: sourceFile comment wins, else the outer class name + .java', () => {
    expect(retraceFrame(m, frame('a.e', 'a', 1))![0].filename).toBe('CacheEntries.kt');
    expect(retraceFrame(m, frame('a.c$a', 'a', 3))).toEqual([
      { module: 'com.example.vigil.net.HttpProbe$Result', function: 'isOk', filename: 'HttpProbe.java', lineno: 17 },
    ]);
  });

  test('an unknown class is null', () => {
    expect(retraceFrame(m, frame('z.z', 'a', 1))).toBeNull();
    expect(retraceFrame(m, frame('com.example.vigil.cache.LruCache', 'a', 13))).toBeNull(); // original names are not keys
  });

  test('exception types are de-obfuscated', () => {
    expect(originalClass(m, 'a.d')).toBe('com.example.vigil.net.ProbeTimeoutException');
    expect(originalClass(m, 'a.b$a')).toBe('com.example.vigil.cache.LruCache$Node');
    expect(originalClass(m, 'java.lang.IllegalStateException')).toBeNull();
  });
});

describe('tolerance', () => {
  test('Windows and old-Mac line endings and a BOM give the same results', () => {
    for (const text of ['\ufeff' + FIXTURE.replace(/\n/g, '\r\n'), FIXTURE.replace(/\n/g, '\r')]) {
      const w = parseProguardMapping(text);
      expect(retraceFrame(w, frame('a.b', 'a', 5))).toEqual(retraceFrame(m, frame('a.b', 'a', 5)));
      expect(retraceFrame(w, frame('a.b', 'a', 15))).toEqual(retraceFrame(m, frame('a.b', 'a', 15)));
      expect(retraceFrame(w, frame('a.c$a', 'b', 4))).toEqual(retraceFrame(m, frame('a.c$a', 'b', 4)));
      expect(originalClass(w, 'a.d')).toBe('com.example.vigil.net.ProbeTimeoutException');
    }
  });

  test('garbage never throws, and valid lines among it still work', () => {
    const junk = [
      '',
      '\u0000\u0001\u0002',
      '-> :',
      ' -> a:',
      'not a mapping at all',
      '{"version":3,"mappings":"AAAA"}',
      'x'.repeat(100_000),
      'com.example.Ok -> q.q:',
      '# {"id":"sourceFile","fileName":',
      '    1:x:void broken() -> a',
      '    9:3:void backwards():1 -> a',
      '    1:2:void unclosed(int -> a',
      '    void noArrow()',
      '    ::::',
      '    2:2:void good():7:7 -> a',
      'trailing garbage without colon -> z',
      '    3:3:void stillOk():8 -> a',
    ].join('\n');
    for (const text of [junk, '', '\n\n\n', '#', 'a -> b:', FIXTURE.slice(0, 777), '\r\n\r', null as unknown as string]) {
      expect(() => parseProguardMapping(text)).not.toThrow();
      const g = parseProguardMapping(text);
      expect(() => retraceFrame(g, frame('a.b', 'a', 1))).not.toThrow();
      expect(() => originalClass(g, 'a.b')).not.toThrow();
    }
    const g = parseProguardMapping(junk);
    expect(retraceFrame(g, frame('q.q', 'a', 2))).toEqual([{ module: 'com.example.Ok', function: 'good', filename: 'Ok.java', lineno: 7 }]);
    expect(retraceFrame(g, frame('q.q', 'a', 3))![0]).toMatchObject({ function: 'stillOk', lineno: 8 });
    expect(originalClass(g, 'q.q')).toBe('com.example.Ok');
    // A truncated sourceFile comment is ignored, not fatal.
    expect(retraceFrame(g, frame('q.q', 'zz', 1))![0].filename).toBe('Ok.java');
    // Nonsense frames on a good mapping.
    expect(retraceFrame(m, { module: undefined as unknown as string, function: 'a', lineno: 1 })).toBeNull();
    expect(retraceFrame(m, frame('a.b', 'a', Number.NaN))).not.toBeNull();
  });
});

test('a 200,000-line mapping parses and retraces in reasonable time', () => {
  const lines: string[] = ['# compiler: R8', '# {"id":"com.android.tools.r8.mapping","version":"2.2"}'];
  let n = 0;
  while (lines.length < 200_000) {
    const obf = `o${n.toString(36)}`;
    lines.push(`com.example.generated.pkg${n % 97}.Type${n} -> ${obf}:`);
    if (n % 3 === 0) lines.push(`# {"id":"sourceFile","fileName":"Gen${n}.kt"}`);
    lines.push('    java.lang.String name -> a');
    for (let j = 0; j < 6; j++) lines.push(`    ${j * 10 + 1}:${j * 10 + 5}:void method${j}(int,java.lang.String):${100 + j * 20}:${104 + j * 20} -> a`);
    lines.push(`    7:7:void com.example.generated.Inline${n}.inner():12 -> b`, '    7:7:void outer():3 -> b');
    n++;
  }
  const text = lines.join('\n');
  const t0 = Date.now();
  const big = parseProguardMapping(text);
  const last = n - 1;
  const obf = `o${last.toString(36)}`;
  expect(retraceFrame(big, frame(obf, 'a', 33))).toEqual([
    { module: `com.example.generated.pkg${last % 97}.Type${last}`, function: 'method3', filename: last % 3 === 0 ? `Gen${last}.kt` : `Type${last}.java`, lineno: 162 },
  ]);
  expect(retraceFrame(big, frame('o0', 'b', 7))!.map((f) => f.function)).toEqual(['inner', 'outer']);
  expect(originalClass(big, 'o1')).toBe('com.example.generated.pkg1.Type1');
  // Loose bound: catches accidental quadratic behaviour, not a benchmark.
  expect(Date.now() - t0).toBeLessThan(10_000);
});
