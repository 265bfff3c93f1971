/**
 * The one interface every searched type implements, and the ranked query
 * most of them share (docs in openapi.yaml, `searchResources`).
 *
 * A type's query reads only columns that are shown by the type's own
 * endpoint: names, titles, e-mail addresses, prefixes. Sealed columns
 * (`config_enc`, `target_enc`, `secret_enc`, heartbeat tokens), hashes and
 * secrets are never named in a search query, so they can be neither matched
 * nor returned.
 */
import { sql, type RawBuilder } from 'kysely';
import type { components } from '../../../gen/openapi';
import type { Caller } from '../../auth/caller';
import type { Permission } from '../../auth/roles';
import type { Db } from '../../db/connect';

/** One hit as the API returns it. */
export type SearchHit = components['schemas']['SearchHit'];
/** The type identifiers of the contract (`SearchHit.type`). */
export type SearchType = SearchHit['type'];
/** Which field matched. */
export type MatchedField = SearchHit['matchedField'];

/** What to look for, prepared once per request. */
export interface Terms {
  /** `q` trimmed. */
  text: string;
  /** Fewer than three characters: only the start of the first field matches (no trigram to look up). */
  short: boolean;
  /** LIKE pattern (escaped) matching `text` anywhere. */
  contains: string;
  /** At most this many hits. */
  limit: number;
}

/** One searchable type. */
export interface SearchSource {
  /** The permission of the type's own list endpoint: without it the type is not searched. */
  permission: Permission;
  /** At most `terms.limit` hits, best first, of what the caller could read through the type's own endpoint. */
  search(db: Db, caller: Caller, terms: Terms): Promise<SearchHit[]>;
}

/**
 * Matches further inside a field are ranked among this many found per field
 * (in index order): beyond it a broad term would make every search read and
 * sort every matching row. Exact and prefix matches of the first field are
 * always found, through a btree index, whatever their number.
 */
export const CANDIDATES = 200;
/** Types ranked newest first also consider every match among this many most recent records. */
export const RECENT = 2000;

/** `like` pattern matching `text` anywhere (LIKE's `\`, `%` and `_` escaped). */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** The caller's confinement as a condition on `column` (true when unconfined). */
export function inWorkspaces(caller: Caller, column: RawBuilder<unknown>): RawBuilder<boolean> {
  if (caller.workspaceIds === null) return sql<boolean>`true`;
  return sql<boolean>`${column} = any(${[...caller.workspaceIds]}::text[])`;
}

/** A second searched field of a type. */
export interface OtherField {
  field: MatchedField;
  /** The condition it matches on (uses `terms.contains`); skipped for a short `q` unless `short` is given. */
  match: (t: Terms) => RawBuilder<boolean>;
  /** The condition for a short `q`, when the field is searched then too. */
  short?: (t: Terms) => RawBuilder<boolean>;
  /** What `snippet` shows. */
  snippet: (t: Terms) => RawBuilder<string | null>;
}

/** A type searched by its first field (name, title, e-mail) and maybe others. */
export interface RankedSpec {
  /** `from` clause with joins, e.g. sql`monitors m`. */
  from: RawBuilder<unknown>;
  /** The rows the caller may read: organisation and confinement. */
  visible: RawBuilder<boolean>;
  /** The first field; it is the hit's title. */
  title: RawBuilder<string>;
  /** Selects `id`, `subtitle` and `workspace_id`. */
  columns: RawBuilder<unknown>;
  others?: OtherField[];
  /** A timestamp: newest first within each rank step, and the most recent rows are always considered. */
  newest?: RawBuilder<Date>;
}

/** A row of a ranked search. */
export interface RankedRow {
  id: string; title: string; subtitle: string | null; workspace_id: string | null; snippet: string | null; matched: MatchedField;
}

/**
 * Runs a ranked search: rank 0 exact first field, 1 it starts with `q`
 * (alphabetical), 2 `q` inside it (shorter first), 3 another field; with
 * `newest`, newest first inside each rank. Every arm filters on `visible`.
 */
export async function rankedSearch(db: Db, spec: RankedSpec, t: Terms): Promise<RankedRow[]> {
  const title = sql`lower(${spec.title})`;
  const q = sql`lower(${t.text})`;
  const startsWith = sql<boolean>`starts_with(${title}, ${q})`;
  const inTitle = sql<boolean>`${title} like lower(${t.contains})`;
  const exactOrPrefix = sql<number>`case when ${title} = ${q} then 0 else 1 end`;
  const row = (rank: RawBuilder<number>, matched: MatchedField, snippet: RawBuilder<unknown>) =>
    sql`${rank} as rank, ${spec.title} as title, ${spec.columns}, ${snippet} as snippet, ${matched}::text as matched, ${spec.newest ?? sql`null::timestamptz`} as newest`;
  const others = (spec.others ?? []).filter((o) => !t.short || o.short);
  const otherMatch = (o: OtherField) => (t.short ? o.short!(t) : o.match(t));
  const arms: RawBuilder<unknown>[] = [
    // The range lets the (organization_id, lower(title) text_pattern_ops) btree find prefixes in order.
    sql`(select ${row(exactOrPrefix, 'title', sql`null`)} from ${spec.from}
      where ${spec.visible} and ${title} ~>=~ ${q} and ${title} ~<~ (${q} || chr(1114111)) and ${startsWith}
      order by ${title} using ~<~ ${spec.newest ? sql`, ${spec.newest} desc` : sql``} limit ${t.limit})`,
  ];
  if (!t.short) {
    arms.push(sql`(select ${row(sql`2`, 'title', sql`null`)} from ${spec.from}
      where ${spec.visible} and ${inTitle} and not ${startsWith} limit ${CANDIDATES})`);
  }
  for (const o of others) {
    arms.push(sql`(select ${row(sql`3`, o.field, o.snippet(t))} from ${spec.from}
      where ${spec.visible} and ${otherMatch(o)} and not ${t.short ? startsWith : inTitle} limit ${CANDIDATES})`);
  }
  if (spec.newest) {
    // The newest records, whatever the indexes find first: recent matches always rank.
    const rank = sql<number>`case when ${startsWith} then ${exactOrPrefix} when ${t.short ? sql`false` : inTitle} then 2 else 3 end`;
    const any = [t.short ? startsWith : inTitle, ...others.map(otherMatch)];
    const firstOther = others.length
      ? sql`case ${sql.join(others.map((o) => sql`when ${otherMatch(o)} then ${o.field}::text`), sql` `)} end`
      : sql`null`;
    const snippet = others.length
      ? sql`case ${sql.join(others.map((o) => sql`when ${otherMatch(o)} then ${o.snippet(t)}`), sql` `)} end`
      : sql`null`;
    arms.push(sql`(select ${rank} as rank, ${spec.title} as title, ${spec.columns},
        case when ${rank} < 3 then null else ${snippet} end as snippet,
        case when ${rank} < 3 then 'title' else ${firstOther} end as matched, ${spec.newest} as newest
      from ${spec.from} where ${spec.visible} and ${spec.newest} >= coalesce((
        select ${spec.newest} from ${spec.from} where ${spec.visible} order by ${spec.newest} desc offset ${RECENT - 1} limit 1), '-infinity')
        and (${sql.join(any, sql` or `)}))`);
  }
  const order = spec.newest
    ? sql`rank, newest desc, lower(title), id`
    : sql`rank, case when rank = 2 then length(title) end, lower(title) collate "C", id`;
  const { rows } = await sql<RankedRow>`
    select id, title, subtitle, workspace_id, snippet, matched from (
      select distinct on (id) * from (${sql.join(arms, sql` union all `)}) a order by id, rank
    ) d order by ${order} limit ${t.limit}`.execute(db);
  return rows;
}

/** Hits of ranked rows. */
export function hitsOf(type: SearchType, rows: RankedRow[], path: (id: string) => string): SearchHit[] {
  return rows.map((r) => ({
    type, id: r.id, title: r.title, subtitle: r.subtitle, snippet: r.matched === 'title' ? null : r.snippet,
    matchedField: r.matched, workspaceId: r.workspace_id, path: path(r.id),
  }));
}
