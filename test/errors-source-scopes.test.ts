import { enclosingFunctionName, functionScopes } from '../src/errors/sourceScopes';

// The original name of the function around a position, from the original
// source (what a resolved JavaScript frame is named after). Positions are
// given by a marker comment `/*@*/` in the source; the name at it is asked.

/** The name at the marker, asked as a source map would give it: 1-based line, 0-based column. */
function nameAt(src: string): string | null {
  const at = src.indexOf('/*@*/');
  if (at < 0) throw new Error('no marker');
  const before = src.slice(0, at).split('\n');
  return enclosingFunctionName(src, before.length, before[before.length - 1].length);
}

test('declarations, named and assigned function expressions, arrows with block and expression bodies', () => {
  expect(nameAt('function computeTotal(cart) {\n  let t = 0;\n  /*@*/throw new Error("x");\n}')).toBe('computeTotal');
  expect(nameAt('export async function load() { await /*@*/fetch("/x") }')).toBe('load');
  expect(nameAt('function* ids() { yield /*@*/1 }')).toBe('ids');
  expect(nameAt('const save = function () { /*@*/go() };')).toBe('save');
  expect(nameAt('var save = function persist() { /*@*/go() };')).toBe('persist');
  expect(nameAt('let run = async () => {\n  /*@*/go();\n};')).toBe('run');
  expect(nameAt('const lineTotal = (line) => line.price * /*@*/line.quantity;')).toBe('lineTotal');
  expect(nameAt('const twice = x => /*@*/x * 2\nconst next = 1')).toBe('twice');
  expect(nameAt('app.handlers.save = function () { /*@*/go() }')).toBe('app.handlers.save');
  expect(nameAt('this.onClick = () => { /*@*/go() }')).toBe('onClick');
  expect(nameAt('cache ??= () => { /*@*/go() }')).toBe('cache');
});

test('methods: classes (qualified, constructor, static, async, accessors, private, fields) and object literals', () => {
  const cls = `class Cart extends Base {
  #items = [];
  static empty() { return /*A*/new Cart(); }
  constructor(items) { super(); /*B*/this.items = items; }
  async checkout() { /*C*/await pay(); }
  get size() { return /*D*/this.#items.length; }
  #recalc() { /*E*/go(); }
  handle = (e) => { /*F*/go(e); };
  'quoted name'() { /*G*/go(); }
  [Symbol.iterator]() { /*H*/go(); }
}`;
  const expected: Record<string, string | null> = {
    A: 'Cart.empty', B: 'new Cart', C: 'Cart.checkout', D: 'Cart.size', E: 'Cart.#recalc', F: 'Cart.handle', G: 'Cart.quoted name', H: null,
  };
  for (const [marker, name] of Object.entries(expected)) expect([marker, nameAt(cls.replace(`/*${marker}*/`, '/*@*/'))]).toEqual([marker, name]);

  const obj = `const api = {
  load() { /*A*/go(); },
  save: function () { /*B*/go(); },
  remove: async (id) => { /*C*/go(id); },
  'x-y'() { /*D*/go(); },
  *[key]() { /*E*/go(); },
};`;
  const expectedObj: Record<string, string | null> = { A: 'load', B: 'save', C: 'remove', D: 'x-y', E: null };
  for (const [marker, name] of Object.entries(expectedObj)) expect([marker, nameAt(obj.replace(`/*${marker}*/`, '/*@*/'))]).toEqual([marker, name]);
  expect(nameAt('const Shop = class { buy() { /*@*/go() } }')).toBe('Shop.buy');
});

test('the innermost function wins; an anonymous one (a callback) and top-level code name nothing', () => {
  const src = `function outer(items) {
  /*A*/prepare();
  items.forEach((item) => { /*B*/check(item); });
  const inner = () => { /*C*/go(); };
  return items.map(function (x) { return /*D*/x * 2; });
}
/*E*/outer([]);
(function () { /*F*/go(); })();
!function iife() { /*G*/go(); }();`;
  const expected: Record<string, string | null> = { A: 'outer', B: null, C: 'inner', D: null, E: null, F: null, G: 'iife' };
  for (const [marker, name] of Object.entries(expected)) expect([marker, nameAt(src.replace(`/*${marker}*/`, '/*@*/'))]).toEqual([marker, name]);
});

test('blocks are not functions: if, for, while, switch, try/catch, labels, a call followed by a block', () => {
  const src = `function f(x) {
  if (x) { for (const y of x) { while (y) { switch (y) { case 1: { try { g(); } catch (e) { /*@*/h(); } } } } } }
}`;
  expect(nameAt(src)).toBe('f');
  expect(nameAt('call(x)\n{ /*@*/go(); }')).toBeNull();
  expect(nameAt('outer: { /*@*/go(); }')).toBeNull();
  expect(nameAt('function f() { if (a) b(); else { /*@*/c(); } }')).toBe('f');
});

test('braces and quotes inside strings, templates, comments and regular expressions do not count', () => {
  const src = `const a = '}{"';
const b = "{'}";
// function fake() {
/* } } function alsoFake() { */
const re = /["}{'\\/]+/g, cls = /[/}]/;
const half = total / 2 / 3;
const t = \`}\${ fn(() => { return \`{\${'}'}\` }) }{\`;
function real() {
  const u = 'http://x/{';
  return /*@*/u.replace(/\\{/g, '') + \`\${'{'}\`;
}`;
  expect(nameAt(src)).toBe('real');
  expect(nameAt(src.replace('/*@*/', '').replace("const half", "/*@*/const half"))).toBeNull();
  // A regular expression right after a block.
  expect(nameAt('function g() { if (a) { b(); } /}{/.test(s) && /*@*/c(); }')).toBe('g');
  // Division after a parenthesis, not a regular expression.
  expect(nameAt('function h(a, b) { const r = (a) / (b) / 2; { } /*@*/go(); }')).toBe('h');
});

test('TypeScript: type parameters, parameter and return annotations', () => {
  expect(nameAt('function pick<T>(xs: T[], n: number): Promise<Map<string, T>> { /*@*/go(); }')).toBe('pick');
  expect(nameAt('const load = async (id: string): Promise<void> => { /*@*/go(); };')).toBe('load');
  expect(nameAt('const h: Handler<Event> = (e) => { /*@*/go(e); };')).toBe('h');
  expect(nameAt('class Repo { private async find(id: number): Promise<Row | null> { /*@*/go(); } }')).toBe('Repo.find');
  expect(nameAt('const id = <T,>(x: T): T => /*@*/x;')).toBe('id');
});

test('minified code on one line, and positions out of range', () => {
  const min = 'function a(b){return b.map(c=>c*2)}function d(){throw new Error("x")}var e=function(){return d()};';
  expect(enclosingFunctionName(min, 1, min.indexOf('throw'))).toBe('d');
  expect(enclosingFunctionName(min, 1, min.indexOf('c*2'))).toBeNull();
  expect(enclosingFunctionName(min, 1, min.indexOf('return b'))).toBe('a');
  expect(enclosingFunctionName(min, 1, min.indexOf('d()}'))).toBe('e');
  expect(enclosingFunctionName(min, 5, 0)).toBeNull();
  expect(functionScopes('')).toEqual([]);
  // Unbalanced input never throws.
  expect(() => functionScopes('function x( { ` ${ /* ')).not.toThrow();
});
