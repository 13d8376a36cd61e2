import type { SelectQueryBuilder } from "kysely";
import type { Database } from "../db/database.js";
import { countOf, type Row, type TableName } from "../db/query.js";
import type { Tables } from "../db/tables.js";
import { invalidInput, fieldError } from "../errors.js";

// Lists are newest first. The cursor is the (createdAt, id) of the last row
// returned, opaque to callers.
export interface Page<T> {
  data: T[];
  hasMore: boolean;
  nextCursor?: string;
}

export interface CursorPosition {
  createdAt: Date;
  id: string;
}

export interface PageRequest {
  limit: number;
  cursor?: string | undefined;
}

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined || cursor === "") return undefined;
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [
      string,
      string,
    ];
    const createdAt = new Date(at);
    if (typeof id !== "string" || Number.isNaN(createdAt.getTime())) throw new Error("bad cursor");
    return { createdAt, id };
  } catch {
    throw unknownCursor();
  }
}

/** The answer to a cursor this API did not make (400 naming the parameter). */
function unknownCursor() {
  return invalidInput("cursor is not a value returned as nextCursor", {
    errors: [fieldError("query.cursor", "unknown cursor")],
  });
}

export function encodeCursor(row: CursorPosition): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id])).toString("base64url");
}

/**
 * One page of a list after the cursor, newest first (`desc`) or oldest first
 * (`asc`): `limit + 1` rows (the extra one tells toPage whether there is
 * more). For any table with `createdAt` and `id`:
 * `q.selectFrom(...).$call(newestPage(cursor, limit))`.
 */
export function pageInOrder(
  order: "asc" | "desc",
  cursor: CursorPosition | undefined,
  limit: number,
) {
  const after = order === "desc" ? "<" : ">";
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return <QB extends SelectQueryBuilder<any, any, any>>(qb: QB): QB => {
    const ordered = qb
      .orderBy("createdAt", order)
      .orderBy("id", order)
      .limit(limit + 1);
    if (!cursor) return ordered as QB;
    return ordered.where((eb) =>
      eb.or([
        eb("createdAt", after, cursor.createdAt),
        eb.and([eb("createdAt", "=", cursor.createdAt), eb("id", after, cursor.id)]),
      ]),
    ) as QB;
  };
}

export const newestPage = (cursor: CursorPosition | undefined, limit: number) =>
  pageInOrder("desc", cursor, limit);

/** Fetch `limit + 1` rows, then call this to cut the page and build the cursor. */
export function toPage<R extends CursorPosition, T>(
  rows: R[],
  limit: number,
  map: (row: R) => T,
): Page<T> {
  const hasMore = rows.length > limit;
  const kept = hasMore ? rows.slice(0, limit) : rows;
  const page: Page<T> = { data: kept.map(map), hasMore };
  const last = kept.at(-1);
  if (hasMore && last) page.nextCursor = encodeCursor(last);
  return page;
}

/** The time filters of several lists, each inclusive and optional. */
export interface TimeFilter {
  createdAfter?: string | undefined;
  createdBefore?: string | undefined;
  updatedAfter?: string | undefined;
  updatedBefore?: string | undefined;
}

/**
 * Narrows a list to the rows created and updated within `filter`'s times:
 * `q.selectFrom(...).$call(withinTimes(filter))`, for any table with
 * `createdAt` and `updatedAt`.
 */
export function withinTimes(filter: TimeFilter) {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  return <QB extends SelectQueryBuilder<any, any, any>>(qb: QB): QB => {
    let query = qb;
    const bounds = [
      ["createdAt", ">=", filter.createdAfter],
      ["createdAt", "<=", filter.createdBefore],
      ["updatedAt", ">=", filter.updatedAfter],
      ["updatedAt", "<=", filter.updatedBefore],
    ] as const;
    for (const [column, op, value] of bounds) {
      if (value) query = query.where(column, op, new Date(value)) as QB;
    }
    return query;
  };
}

/**
 * A page of a fixed, ordered list held in memory (the sandbox's
 * directories): the cursor is the position after the page, opaque to
 * callers like the others.
 */
export function pageOfList<T, V>(
  items: readonly T[],
  limit: number,
  cursor: string | undefined,
  map: (item: T) => V,
): Page<V> {
  const start = cursor === undefined || cursor === "" ? 0 : listPosition(cursor);
  const end = start + limit;
  const page: Page<V> = { data: items.slice(start, end).map(map), hasMore: end < items.length };
  if (page.hasMore)
    page.nextCursor = Buffer.from(JSON.stringify(["at", end])).toString("base64url");
  return page;
}

function listPosition(cursor: string): number {
  try {
    const [tag, position] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [
      unknown,
      unknown,
    ];
    if (tag === "at" && Number.isSafeInteger(position) && (position as number) >= 0) {
      return position as number;
    }
  } catch {
    // Answered below, like any other cursor it did not make.
  }
  throw unknownCursor();
}

/** The column a page's rows carry their list's totalCount in (see countedPage). */
const TOTAL = "__totalCount";

/**
 * A page of a list and its `totalCount` (how many rows match, over all
 * pages): `rows` fetches `limit + 1` rows (see newestPage), `count` is the
 * same query selecting `COUNT(*) AS count`. The count rides on the page's
 * rows as a scalar subquery, evaluated once: one statement (one round trip
 * on PostgreSQL) and one snapshot for both. Only an empty page, which has no
 * row to carry it, counts on its own.
 */
export async function countedPage<R extends CursorPosition, T>(
  data: Database,
  query: {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    rows: SelectQueryBuilder<any, any, R>;
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    count: SelectQueryBuilder<any, any, { count: unknown }>;
  },
  limit: number,
  map: (row: R) => T,
): Promise<Page<T> & { totalCount: number }> {
  const rows = await data.all(query.rows.select(query.count.as(TOTAL)));
  const first = rows[0];
  const totalCount =
    first === undefined ? countOf(await data.one(query.count)) : Number(first[TOTAL]);
  return { ...toPage(rows, limit, map), totalCount };
}

/** Tables that lists page through: newest first by (createdAt, id). */
type PagedTable = {
  [T in TableName]: Row<T> extends CursorPosition ? T : never;
}[TableName];

/**
 * The newest-first page of the rows `query` selects from one table (with its
 * filters applied), and how many it selects in all: the list operations'
 * common case of countedPage.
 */
export function newestCountedPage<T extends PagedTable, V>(
  data: Database,
  query: SelectQueryBuilder<Tables, T, object>,
  request: PageRequest,
  map: (row: Row<T>) => V,
): Promise<Page<V> & { totalCount: number }> {
  // selectAll() of a single table selects exactly its Row.
  const rows = query.selectAll().$call(newestPage(decodeCursor(request.cursor), request.limit));
  return countedPage(
    data,
    {
      rows: rows as unknown as SelectQueryBuilder<Tables, T, Row<T>>,
      count: query.select((eb) => eb.fn.countAll().as("count")),
    },
    request.limit,
    map,
  );
}
