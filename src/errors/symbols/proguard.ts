/**
 * ProGuard / R8 `mapping.txt` retracing (reference A6): turns an obfuscated
 * Java/Kotlin frame (`a.b.a:13`) back into the original frames, expanding
 * methods R8 inlined into one minified position into several frames.
 *
 * Pure: no I/O, no database. Mapping files of Android apps run to tens of MB,
 * so parsing is one cheap pass that only indexes class headers (by obfuscated
 * and original name) and remembers where each class's member block lies in
 * the text; a class's members are parsed the first time a frame asks for
 * that class. A stack trace touches a handful of classes out of tens of
 * thousands, so most member lines are never parsed at all.
 *
 * Nothing here throws on bad input: a mapping is uploaded by users and may be
 * truncated, hand-edited or not a mapping at all; lines that cannot be read
 * are skipped and the rest still works.
 */

/** A parsed mapping file. Opaque: only the functions of this module read it. */
export interface ProguardMapping {
  readonly [mappingBrand]: true;
}
declare const mappingBrand: unique symbol;

/** One retraced frame, as returned by {@link retraceFrame}. */
export interface RetracedFrame {
  /** Original class name (`com.example.Foo$Inner`). */
  module: string;
  /** Original method name (`<init>`, `lambda$main$0`, …). */
  function: string;
  /** Source file name: R8's `sourceFile` metadata, else derived from the outer class name. */
  filename: string | null;
  /** Original line, or null when it cannot be known. */
  lineno: number | null;
  /**
   * Present only when the mapping did not decide between candidates with
   * different original names and the first one was picked; says which others
   * were possible so a reader knows the frame is a guess.
   */
  note?: string;
}

/** One method line of a class block. */
interface MethodEntry {
  /** Minified line range; null for lines without one (ProGuard `void f() -> a`). */
  minStart: number | null;
  minEnd: number | null;
  /** Original class when the name was qualified (an inlined method of another class), else null. */
  owner: string | null;
  name: string;
  origStart: number | null;
  origEnd: number | null;
  obfuscated: string;
}

/** Consecutive entries sharing one minified range: innermost first, as R8 writes them. */
type Chain = MethodEntry[];

interface ClassRecord {
  original: string;
  obfuscated: string;
  /** From the `# {"id":"sourceFile",…}` comment that follows the class line. */
  fileName: string | null;
  /** The member block is text[bodyStart, bodyEnd). */
  bodyStart: number;
  bodyEnd: number;
  /** Obfuscated method name → its chains in file order; built on first use. */
  methods: Map<string, Chain[]> | null;
}

interface MappingState {
  text: string;
  byObfuscated: Map<string, ClassRecord>;
  byOriginal: Map<string, ClassRecord>;
}

const CLASS_LINE = /^(\S+)\s+->\s+(\S+?)\s*:$/;
// [minStart:minEnd:]returnType name(args)[:origStart[:origEnd]] -> obfuscated
const METHOD_LINE = /^(?:(\d+):(\d+):)?(\S+)\s+([^\s(]+)\(([^()]*)\)(?::(\d+)(?::(\d+))?)?\s+->\s+(\S+)$/;

/**
 * Parses the text of a ProGuard or R8 `mapping.txt`. Never throws: comment
 * lines, blank lines and lines that are not valid mapping lines are skipped;
 * `\r\n` and `\r` line endings and a leading BOM are accepted. Only class
 * headers are read here; a class's members are parsed when first retraced.
 * If two class lines share one obfuscated name (not valid output of either
 * tool) the first one wins.
 */
export function parseProguardMapping(text: string): ProguardMapping {
  const state: MappingState = { text: typeof text === 'string' ? text : '', byObfuscated: new Map(), byOriginal: new Map() };
  const src = state.text;
  let current: ClassRecord | null = null;
  // A file with old Mac '\r' line endings has no '\n' at all; '\r\n' is
  // handled by dropping the '\r' before each '\n'.
  const sep = src.includes('\n') ? '\n' : '\r';
  let pos = src.charCodeAt(0) === 0xfeff ? 1 : 0;
  while (pos < src.length) {
    let end = src.indexOf(sep, pos);
    if (end === -1) end = src.length;
    const lineEnd = end > pos && src.charCodeAt(end - 1) === 13 ? end - 1 : end;
    const first = src.charCodeAt(pos);
    // Member lines are indented; they are only located here, not parsed.
    if (first !== 32 && first !== 9 && lineEnd > pos) {
      const line = src.slice(pos, lineEnd).trimEnd();
      if (first === 35 /* # */) {
        if (current && current.fileName === null && line.includes('sourceFile')) current.fileName = sourceFileOf(line);
      } else if (line.endsWith(':')) {
        const m = CLASS_LINE.exec(line);
        if (m) {
          if (current) current.bodyEnd = pos;
          current = { original: m[1], obfuscated: m[2], fileName: null, bodyStart: end + 1, bodyEnd: src.length, methods: null };
          if (!state.byObfuscated.has(current.obfuscated)) state.byObfuscated.set(current.obfuscated, current);
          if (!state.byOriginal.has(current.original)) state.byOriginal.set(current.original, current);
        }
      }
      // Any other unindented line (garbage, or a member someone un-indented)
      // stays inside the current block: the member parser skips what it cannot read.
    }
    pos = end + 1;
  }
  return state as unknown as ProguardMapping;
}

/**
 * Retraces one Java frame (`module` = obfuscated class, `function` =
 * obfuscated method, `lineno` = minified line) into the original frames,
 * innermost first (several when R8 inlined methods into that position).
 *
 * - The method entries whose minified range holds the line are used; the
 *   original line is `origStart + (lineno − minStart)` when the entry maps a
 *   range of the same length, otherwise `origStart` as written (a single
 *   original line, usual for inlined frames); an entry with no original line
 *   keeps the frame's line.
 * - Without a line, or when no range holds it, entries without a minified
 *   range are used (their line is the frame's); failing those, the method is
 *   still named but its line is null, because a minified line outside every
 *   range cannot be translated.
 * - When several candidates remain (overloads without lines), the result is
 *   the first; if their original names differ it carries a `note`.
 * - A class that is mapped without that method (class-only mapping, or a
 *   method kept unrenamed) gets its class name restored and the rest kept.
 *
 * Returns null when the class is not in the mapping (not obfuscated, or a
 * different mapping file).
 */
export function retraceFrame(
  m: ProguardMapping,
  frame: { module: string; function: string; lineno: number | null },
): RetracedFrame[] | null {
  const state = m as unknown as MappingState;
  if (!state?.byObfuscated || typeof frame?.module !== 'string') return null;
  const cls = state.byObfuscated.get(frame.module);
  if (!cls) return null;
  const line = typeof frame.lineno === 'number' && Number.isFinite(frame.lineno) ? frame.lineno : null;
  const chains = methodsOf(state, cls).get(frame.function) ?? [];
  if (chains.length === 0) {
    return [{ module: cls.original, function: frame.function, filename: fileNameOf(state, cls.original), lineno: line }];
  }

  let candidates: Chain[] = [];
  let lineKnown = true;
  if (line !== null) candidates = chains.filter((c) => c[0].minStart !== null && c[0].minStart <= line && line <= c[0].minEnd!);
  if (candidates.length === 0) candidates = chains.filter((c) => c[0].minStart === null);
  if (candidates.length === 0) {
    // Every entry has a range and none holds the line (stale mapping or a
    // missing line): name the method each chain belongs to (its outermost
    // entry), without a line.
    candidates = chains.map((c) => [c[c.length - 1]]);
    lineKnown = false;
  }

  const results = candidates.map((chain) =>
    chain.map((e): RetracedFrame => {
      const module = e.owner ?? cls.original;
      return { module, function: e.name, filename: fileNameOf(state, module), lineno: lineKnown ? originalLine(e, line) : null };
    }),
  );
  const chosen = results[0];
  const key = (frames: RetracedFrame[]) => frames.map((f) => `${f.module}.${f.function}`).join(' < ');
  const others = [...new Set(results.slice(1).map(key).filter((k) => k !== key(chosen)))];
  if (others.length > 0) {
    chosen[0] = { ...chosen[0], note: `ambiguous: the mapping also allows ${others.join(', ')}` };
  }
  return chosen;
}

/**
 * The original name of an obfuscated class (`a.b` → `com.example.Orig`),
 * used for exception types; null when the class is not in the mapping.
 */
export function originalClass(m: ProguardMapping, obfuscated: string): string | null {
  const state = m as unknown as MappingState;
  return state?.byObfuscated?.get(obfuscated)?.original ?? null;
}

function originalLine(e: MethodEntry, line: number | null): number | null {
  if (e.origStart === null) return line;
  let out = e.origStart;
  if (line !== null && e.minStart !== null && e.origEnd !== null && e.origEnd - e.origStart === e.minEnd! - e.minStart) {
    out = e.origStart + (line - e.minStart);
  }
  // R8 writes 0 for "no original line"; Java lines start at 1.
  return out > 0 ? out : null;
}

function fileNameOf(state: MappingState, className: string): string | null {
  const known = state.byOriginal.get(className)?.fileName;
  if (known) return known;
  // javac's default: the top-level class's simple name + .java. R8 writes a
  // sourceFile comment precisely when the real name differs from this.
  const simple = className.slice(className.lastIndexOf('.') + 1);
  const outer = simple.split('$')[0];
  return outer ? `${outer}.java` : null;
}

function sourceFileOf(line: string): string | null {
  const brace = line.indexOf('{');
  if (brace === -1) return null;
  try {
    const meta = JSON.parse(line.slice(brace)) as { id?: unknown; fileName?: unknown };
    return meta?.id === 'sourceFile' && typeof meta.fileName === 'string' && meta.fileName ? meta.fileName : null;
  } catch {
    return null;
  }
}

function methodsOf(state: MappingState, cls: ClassRecord): Map<string, Chain[]> {
  if (cls.methods) return cls.methods;
  const methods = new Map<string, Chain[]>();
  let last: { entry: MethodEntry; chain: Chain } | null = null;
  const body = state.text.slice(cls.bodyStart, Math.max(cls.bodyStart, cls.bodyEnd));
  for (const raw of body.split(/\r\n|\r|\n/)) {
    const line = raw.trim();
    // Comments (R8 metadata such as `synthesized`) and blank lines do not
    // break an inline chain; a field or unreadable line does.
    if (line === '' || line.startsWith('#')) continue;
    const e = line.includes('(') ? parseMethod(line) : null;
    if (!e) {
      last = null;
      continue;
    }
    const sameRange = last && e.minStart !== null && last.entry.minStart === e.minStart && last.entry.minEnd === e.minEnd && last.entry.obfuscated === e.obfuscated;
    if (sameRange) {
      last!.chain.push(e);
      last!.entry = e;
      continue;
    }
    const chain: Chain = [e];
    const list = methods.get(e.obfuscated);
    if (list) list.push(chain);
    else methods.set(e.obfuscated, [chain]);
    last = { entry: e, chain };
  }
  cls.methods = methods;
  return methods;
}

function parseMethod(line: string): MethodEntry | null {
  const m = METHOD_LINE.exec(line);
  if (!m) return null;
  const num = (s: string | undefined) => (s === undefined ? null : Number(s));
  const minStart = num(m[1]);
  const minEnd = num(m[2]);
  if (minStart !== null && minEnd! < minStart) return null;
  const qualified = m[4];
  const dot = qualified.lastIndexOf('.');
  return {
    minStart,
    minEnd,
    owner: dot > 0 ? qualified.slice(0, dot) : null,
    name: dot > 0 ? qualified.slice(dot + 1) : qualified,
    origStart: num(m[6]),
    origEnd: num(m[7]),
    obfuscated: m[8],
  };
}
