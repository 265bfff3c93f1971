/**
 * The original name of the function a position is in, read from the
 * original source (a map's `sourcesContent`). A source map cannot say it on
 * its own: its `name` at a position is the name of the identifier written
 * there — at a call site the callee's, at a throw site usually none — and a
 * minified frame's `function` is the minified name (reference A5).
 *
 * So the source is scanned once into function scopes (like Sentry's
 * js-source-scopes, but over the original source rather than the minified
 * one, which is never uploaded): a small tokenizer that steps over strings,
 * template literals (with `${…}` nesting), comments and regular-expression
 * literals (told from division by the token before the `/`), then brace,
 * paren and bracket matching. A function scope and its name come from:
 *
 * - `function name(…) {…}` (declarations and named expressions, generators,
 *   async) → `name`;
 * - an anonymous `function (…) {…}` or an arrow `(…) => …` / `x => …` whose
 *   value is assigned: `const|let|var name =`, `a.b.name =` (`this.` is
 *   dropped), a class field `name =` (→ `Class.name`), or an object
 *   property `name:` → that name;
 * - a method `name(…) {…}` in a class body (→ `Class.name`; a constructor
 *   → `new Class`) or in an object literal (→ `name`), with `static`,
 *   `async`, `get`, `set`, `*` prefixes; quoted and private (`#name`) names too;
 * - TypeScript return-type annotations and type parameters are skipped.
 *
 * A block-bodied function ends at its matching `}`; an expression-bodied
 * arrow at the first `,` or `;` at its own depth, at the bracket that closes
 * around it, or at a new line that starts a statement keyword. The innermost
 * scope around the position wins; when it is anonymous (a callback) the name
 * is null and the caller falls back (see `resolveFrames`). Heuristic by
 * nature — no full parser — but it errs towards null, never towards a name
 * from the wrong place.
 */

type TokKind = 'id' | 'punc' | 'str' | 'tpl' | 're' | 'num' | 'priv';
interface Tok { k: TokKind; v: string; s: number; e: number; nl: boolean }

/** A function scope: the source offsets it covers (half-open) and its name (null when anonymous). */
export interface FunctionScope { start: number; end: number; name: string | null }

const PUNCTUATORS = [
  '>>>=', '...', '===', '!==', '**=', '<<=', '>>=', '>>>', '&&=', '||=', '??=',
  '=>', '==', '!=', '<=', '>=', '&&', '||', '??', '?.', '++', '--', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '**', '<<', '>>',
];
const ASSIGN = new Set(['=', '&&=', '||=', '??=']);
/** Keywords after which a `/` starts a regular expression (the others end an expression, so `/` divides). */
const BEFORE_EXPRESSION = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await']);
/** `keyword (…) {` is a block, not a method. */
const CONTROL = new Set(['case', 'if', 'for', 'while', 'switch', 'catch', 'with', 'await', 'function', 'return', 'typeof', 'new', 'delete', 'void', 'in', 'of', 'instanceof']);
/** On a new line these start a statement, so they end an expression-bodied arrow before them. */
const STATEMENT = new Set(['const', 'let', 'var', 'function', 'class', 'if', 'for', 'while', 'do', 'return', 'throw', 'try', 'switch', 'export', 'import', 'break', 'continue']);
const METHOD_PREFIX = new Set(['static', 'async', 'get', 'set', '*', 'public', 'private', 'protected', 'readonly', 'override', 'abstract']);
/** Tokens after which `{` opens an object literal (not a block). */
const OBJECT_AFTER = new Set(['=', '(', ',', ':', '[', '?', '||', '&&', '??', '!', 'return', '...', '=>', 'tpl', '+', '-', '*', 'yield', 'await', 'typeof', 'in', 'of', '||=', '&&=', '??=']);

/** Punctuators by their first character, longest first. */
const PUNCTUATORS_BY_FIRST = new Map<string, string[]>();
for (const p of PUNCTUATORS) PUNCTUATORS_BY_FIRST.set(p[0], [...(PUNCTUATORS_BY_FIRST.get(p[0]) ?? []), p]);

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const isIdStart = (c: string | undefined) => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_' || c === '$' || c > '\u007f');
const isIdPart = (c: string | undefined) => isIdStart(c) || isDigit(c);

function tokenize(src: string): Tok[] {
  const toks: Tok[] = [];
  /** Open `{` of code (true) or of a template's `${` (false), to know where a `}` resumes a template. */
  const braces: boolean[] = [];
  let i = src.startsWith('#!') ? src.indexOf('\n') : 0;
  if (i < 0) i = src.length;
  let nl = false;
  const push = (k: TokKind, s: number, e: number) => { toks.push({ k, v: src.slice(s, e), s, e, nl }); nl = false; };
  /** Scans template characters from `i` (just after a backtick or a `}` that closes `${`). */
  const template = (start: number) => {
    let j = i;
    while (j < src.length) {
      const c = src[j];
      if (c === '\\') { j += 2; continue; }
      if (c === '`') { j++; push('tpl', start, j); i = j; return; }
      if (c === '$' && src[j + 1] === '{') { j += 2; push('tpl', start, j); braces.push(false); i = j; return; }
      j++;
    }
    push('tpl', start, src.length);
    i = src.length;
  };
  const regexAllowed = () => {
    const p = toks[toks.length - 1];
    if (!p) return true;
    if (p.k === 'id') return BEFORE_EXPRESSION.has(p.v);
    // After `}` (a block's end far more often than an object literal's) a `/` starts a regular expression:
    // one must close on the same line, so a division misread as one is found out below.
    if (p.k === 'punc') return p.v !== ')' && p.v !== ']' && p.v !== '++' && p.v !== '--';
    return p.k === 'tpl' && p.v.endsWith('${');
  };
  while (i < src.length) {
    const c = src[i];
    if (c === '\n' || c === '\r' || c === '\u2028' || c === '\u2029') { nl = true; i++; continue; }
    if (c === ' ' || c === '\t' || c === '\f' || c === '\v' || c === '\ufeff' || c === '\u00a0') { i++; continue; }
    if (c === '/' && src[i + 1] === '/') { while (i < src.length && src[i] !== '\n' && src[i] !== '\r') i++; continue; }
    if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      const stop = end < 0 ? src.length : end + 2;
      if (/[\n\r\u2028\u2029]/.test(src.slice(i, stop))) nl = true;
      i = stop;
      continue;
    }
    if (c === '<' && src.startsWith('<!--', i)) { while (i < src.length && src[i] !== '\n') i++; continue; }
    const s = i;
    if (c === '"' || c === "'") {
      i++;
      while (i < src.length && src[i] !== c && src[i] !== '\n') i += src[i] === '\\' ? 2 : 1;
      i = Math.min(i + 1, src.length);
      push('str', s, i);
      continue;
    }
    if (c === '`') { i++; template(s); continue; }
    if (c === '}' && braces.length && braces[braces.length - 1] === false) { braces.pop(); i++; template(s); continue; }
    if (c === '/' && regexAllowed()) {
      let j = i + 1;
      let inClass = false;
      let closed = false;
      while (j < src.length && src[j] !== '\n' && src[j] !== '\r') {
        const d = src[j];
        if (d === '\\') { j += 2; continue; }
        if (d === '[') inClass = true;
        else if (d === ']') inClass = false;
        else if (d === '/' && !inClass) { closed = true; j++; break; }
        j++;
      }
      if (closed) {
        while (j < src.length && isIdPart(src[j])) j++;
        i = j;
        push('re', s, i);
        continue;
      }
      // Not a regular expression after all: a `/` punctuator below.
    }
    if (isDigit(c) || (c === '.' && isDigit(src[i + 1]))) {
      const hex = c === '0' && (src[i + 1] === 'x' || src[i + 1] === 'X');
      i++;
      while (i < src.length && (isIdPart(src[i]) || src[i] === '.' || ((src[i] === '+' || src[i] === '-') && (src[i - 1] === 'e' || src[i - 1] === 'E') && !hex))) i++;
      push('num', s, i);
      continue;
    }
    if (c === '#' && isIdStart(src[i + 1])) {
      i++;
      while (i < src.length && isIdPart(src[i])) i++;
      push('priv', s, i);
      continue;
    }
    if (isIdStart(c) || c === '\\') {
      i++;
      while (i < src.length && (isIdPart(src[i]) || src[i] === '\\')) i++;
      push('id', s, i);
      continue;
    }
    const p = PUNCTUATORS_BY_FIRST.get(c)?.find((x) => src.startsWith(x, i)) ?? c;
    if (p === '{') braces.push(true);
    else if (p === '}') braces.pop();
    i += p.length;
    push('punc', s, i);
  }
  return toks;
}

interface Open { ch: string; at: number; fn?: { start: number; name: string | null }; cls?: string | null; objectish?: boolean }
interface Arrow { start: number; name: string | null; depth: number }

const isP = (t: Tok | undefined, v: string) => !!t && t.k === 'punc' && t.v === v;
const unquote = (t: Tok) => (t.k === 'str' ? t.v.slice(1, -1) : t.v);

/** Every function scope of `src`, in no particular order. */
export function functionScopes(src: string): FunctionScope[] {
  const toks = tokenize(src);
  const scopes: FunctionScope[] = [];
  const stack: Open[] = [];
  /** Close index → open index, for `)` and `>`-less brackets. */
  const match = new Map<number, number>();
  const arrows: Arrow[] = [];
  let pendingClass: { name: string | null; depth: number } | null = null;

  const closeArrows = (depth: number, end: number) => {
    while (arrows.length && arrows[arrows.length - 1].depth >= depth) {
      const a = arrows.pop()!;
      scopes.push({ start: a.start, end, name: a.name });
    }
  };

  /** Index of the token before a TypeScript return type `): T` that ends just before `i` (exclusive), else `i - 1`. */
  const skipReturnType = (i: number): number => {
    if (isP(toks[i - 1], ')')) return i - 1;
    let depth = 0;
    for (let j = i - 1, n = 0; j > 0 && n < 64; j--, n++) {
      const t = toks[j];
      if (t.k === 'punc') {
        if (depth === 0 && (t.v === ';' || ASSIGN.has(t.v) || t.v === ',')) return i - 1;
        if (t.v === ')' || t.v === ']' || t.v === '}' || t.v === '>') depth++;
        else if (t.v === '>>') depth += 2;
        else if (t.v === '(' || t.v === '[' || t.v === '{' || t.v === '<') { depth--; if (depth < 0) return i - 1; }
        else if (depth === 0 && t.v === ':' && isP(toks[j - 1], ')')) return j - 1;
      }
    }
    return i - 1;
  };

  /** Index of the token before `<…>` type parameters ending at `i` (a `>`), else `i`. */
  const skipTypeParams = (i: number): number => {
    if (!isP(toks[i], '>')) return i;
    let depth = 0;
    for (let j = i; j >= 0 && i - j < 64; j--) {
      if (isP(toks[j], '>')) depth++;
      else if (isP(toks[j], '<')) { depth--; if (depth === 0) return j - 1; }
    }
    return i;
  };

  /** The name a function value starting at token `p` is given by what precedes it (`x =`, `a.b =`, `x:`), or null. */
  const assignedName = (p: number): string | null => {
    const before = toks[p - 1];
    if (!before || before.k !== 'punc') return null;
    if (ASSIGN.has(before.v)) {
      let j = p - 2;
      // `const x: Type = …`: skip a simple annotation back to its colon.
      for (let k = j, n = 0; k > 0 && n < 16; k--, n++) {
        if (isP(toks[k], ':') && toks[k - 1]?.k === 'id' && declares(k - 2)) { j = k - 1; break; }
        if (toks[k].k === 'punc' && !['<', '>', '.', '[', ']', '|', '&', ','].includes(toks[k].v)) break;
      }
      const parts: string[] = [];
      while (j >= 0 && (toks[j].k === 'id' || toks[j].k === 'priv')) {
        parts.unshift(toks[j].v);
        if (isP(toks[j - 1], '.') || isP(toks[j - 1], '?.')) j -= 2;
        else break;
      }
      if (parts.length === 0) return null;
      if (parts[0] === 'this' && parts.length > 1) parts.shift();
      return parts.join('.');
    }
    if (before.v === ':') {
      const key = toks[p - 2];
      const prev = toks[p - 3];
      // Object property `{ key: …` or `, key: …` (not a ternary's `a ? b : …`).
      if (key && (key.k === 'id' || key.k === 'str' || key.k === 'num') && (isP(prev, '{') || isP(prev, ','))) return unquote(key);
    }
    return null;
  };

  for (let i = 0; i < toks.length; i++) {
    const t = toks[i];
    if (t.nl && t.k === 'id' && STATEMENT.has(t.v)) closeArrows(stack.length, toks[i - 1]?.e ?? t.s);
    if (t.k === 'id' && t.v === 'class' && !isP(toks[i - 1], '.') && !['(', ':', '=', ',', '}'].some((v) => isP(toks[i + 1], v))) {
      const n = toks[i + 1];
      pendingClass = { name: n && n.k === 'id' && n.v !== 'extends' ? n.v : assignedName(i), depth: stack.length };
      continue;
    }
    if (t.k !== 'punc') continue;
    switch (t.v) {
      case ',': case ';':
        closeArrows(stack.length, toks[i - 1]?.e ?? t.s);
        break;
      case '(': case '[':
        stack.push({ ch: t.v, at: i });
        break;
      case '{': {
        const open: Open = { ch: '{', at: i };
        if (pendingClass && pendingClass.depth === stack.length) {
          open.cls = pendingClass.name;
          pendingClass = null;
        } else if (isP(toks[i - 1], '=>')) {
          const arrow = arrowStart(i - 1);
          open.fn = { start: toks[arrow].s, name: member(assignedName(arrow), stack[stack.length - 1]) };
        } else {
          const close = skipReturnType(i);
          const openParen = isP(toks[close], ')') ? match.get(close) : undefined;
          if (openParen !== undefined) open.fn = functionAt(openParen, stack[stack.length - 1]);
          if (!open.fn) {
            const prev = toks[i - 1];
            open.objectish = !prev || (prev.k === 'punc' ? OBJECT_AFTER.has(prev.v) : prev.k === 'tpl' || (prev.k === 'id' && OBJECT_AFTER.has(prev.v)));
          }
        }
        stack.push(open);
        break;
      }
      case ')': case ']': case '}': {
        closeArrows(stack.length, toks[i - 1]?.e ?? t.s);
        const open = stack.pop();
        if (!open) break;
        if (t.v === ')') match.set(i, open.at);
        if (open.fn) scopes.push({ start: open.fn.start, end: t.e, name: open.fn.name });
        break;
      }
      case '=>': {
        if (isP(toks[i + 1], '{')) break; // a block body: handled at its `{`
        const arrow = arrowStart(i);
        arrows.push({ start: toks[arrow].s, name: member(assignedName(arrow), stack[stack.length - 1]), depth: stack.length });
        break;
      }
    }
  }
  closeArrows(0, src.length);
  return scopes;

  /** The first token of the arrow function whose `=>` is token `i` (its parameters, or `async` before them). */
  function arrowStart(i: number): number {
    let p = skipReturnType(i);
    if (isP(toks[p], ')')) p = match.get(p) ?? p;
    p = skipTypeParams(p - 1) + 1;
    if (toks[p - 1]?.k === 'id' && toks[p - 1].v === 'async' && !toks[p].nl) p--;
    return p;
  }

  /** The function whose parameter list opens at token `j` (a `(`), with its name; undefined when the `{` after it is a block. */
  function functionAt(j: number, parent: Open | undefined): Open['fn'] | undefined {
    let k = skipTypeParams(j - 1);
    const t = toks[k];
    if (!t) return undefined;
    if (t.k === 'id' && t.v === 'function') return { start: t.s, name: member(assignedName(startOfFunctionKeyword(k)), parent) };
    if (isP(t, '*') && toks[k - 1]?.v === 'function') return { start: toks[k - 1].s, name: member(assignedName(startOfFunctionKeyword(k - 1)), parent) };
    const inBody = !!parent && parent.ch === '{' && (parent.cls !== undefined || !!parent.objectish);
    // A computed method `[expr](…) {`: a function, but no name worth giving.
    if (isP(t, ']') && inBody) return { start: t.s, name: null };
    const isName = t.k === 'id' || t.k === 'str' || t.k === 'num' || t.k === 'priv';
    if (!isName) return undefined;
    // `function name(`, `function* name(`, `async function name(`.
    let b = k - 1;
    if (isP(toks[b], '*')) b--;
    if (toks[b]?.k === 'id' && toks[b].v === 'function') return { start: toks[b].s, name: unquote(t) };
    if (t.k === 'id' && CONTROL.has(t.v)) return undefined;
    // A method: only directly inside a class body or an object literal, after a separator or a modifier.
    if (!inBody) return undefined;
    k--;
    while (toks[k] && ((toks[k].k === 'id' || toks[k].k === 'punc') && METHOD_PREFIX.has(toks[k].v))) k--;
    const sep = toks[k];
    if (sep && !(sep.k === 'punc' && [',', ';', '{', '}'].includes(sep.v)) && !toks[k + 1].nl) return undefined;
    const name = unquote(t);
    if (parent.cls !== undefined) {
      if (name === 'constructor') return { start: t.s, name: parent.cls ? `new ${parent.cls}` : null };
      return { start: t.s, name: parent.cls ? `${parent.cls}.${name}` : name };
    }
    return { start: t.s, name };
  }

  /** A class field's function (`handle = () => {}` in `class Cart`) is `Cart.handle`, like a method. */
  function member(name: string | null, parent: Open | undefined): string | null {
    return name && parent?.cls && !name.includes('.') ? `${parent.cls}.${name}` : name;
  }

  /** Whether token `k` comes before a declared name (`const x: T =`, a class field `x: T =`). */
  function declares(k: number): boolean {
    const t = toks[k];
    if (!t || toks[k + 1].nl) return true;
    if (t.k === 'id') return ['const', 'let', 'var'].includes(t.v) || METHOD_PREFIX.has(t.v);
    return t.k === 'punc' && [';', '{', '}'].includes(t.v);
  }

  function startOfFunctionKeyword(k: number): number {
    return toks[k - 1]?.k === 'id' && toks[k - 1].v === 'async' ? k - 1 : k;
  }
}

function offsetOf(src: string, line: number, column: number): number | null {
  let off = 0;
  for (let l = 1; l < line; l++) {
    const n = src.indexOf('\n', off);
    if (n < 0) return null;
    off = n + 1;
  }
  return off + column;
}

/**
 * The original name of the innermost function around `line` (1-based) and
 * `column` (0-based, as source maps count) of `src`; null at top level or
 * when that function is anonymous.
 */
export function enclosingFunctionName(src: string, line: number, column: number, scopes: FunctionScope[] = functionScopes(src)): string | null {
  const at = offsetOf(src, line, column);
  if (at === null) return null;
  let best: FunctionScope | null = null;
  for (const s of scopes) {
    if (s.start <= at && at < s.end && (!best || s.start > best.start || (s.start === best.start && s.end < best.end))) best = s;
  }
  return best?.name ?? null;
}
