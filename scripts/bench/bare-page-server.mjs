// The competitor of the entries bench (entries.mjs): the best a user could get elsewhere for the
// v1 list page of articles, with no framework: `node:http` + a `pg.Pool` (max 10, the server's
// session settings: SERVER_SESSION_OPTIONS) and one hand-written statement, prepared under a
// name (each pool connection parses and plans it once), that builds the whole answer's JSON text
// in PostgreSQL from the typed columns (`typed_<content type id>`, column `f<field id>`, filled by
// the server's triggers) with json_build_object / json_agg; Node only passes the text on:
// `res.end(text)`.
//
//   GET /?per_page=N   (1..100, default 10)  ->  200 {"data":[...the first N published articles...]}
//
// Each article as the API renders it (envelope, title/body/rating, authors and tags expanded to
// full entries in order, the cover a file object), except what the bare answer leaves out: the
// file's URLs (download_url, and temporary_url / image URLs that the API signs with HMAC in Node
// per answer), next_page_url / prev_page_url, and timestamps are PostgreSQL's JSON form
// (`2026-01-02T03:04:05.123456+00:00`, not the API's formatting).
//
// Ids are not hard-coded: at start it looks up the workspace, the content types `person`, `tag`
// and `article` of the bucket, their typed tables and the column of each field (field definition
// id K -> column fK), and checks that those columns exist.
//
// Usage: node scripts/bench/bare-page-server.mjs <database URL> <workspace> <bucket> <API base URL>
// (the base is only the prefix of each entry's api_url, as the API server writes it). It listens
// on 127.0.0.1 on a free port and prints that port alone on a line of stdout once it is ready.
// It exits on SIGTERM/SIGINT and when its stdin ends (the bench that started it is gone).
import http from 'node:http';
import pg from 'pg';
import { SERVER_SESSION_OPTIONS } from './support.mjs';

const [databaseUrl, ws, bucket, apiBase] = process.argv.slice(2);
if (!databaseUrl || !ws || !bucket || !apiBase) {
  console.error('usage: node scripts/bench/bare-page-server.mjs <database URL> <workspace> <bucket> <API base URL>');
  process.exit(2);
}

const literal = (s) => `'${String(s).replaceAll("'", "''")}'`;

/** The workspace id, and per content type name its id, typed table and field columns by name. */
async function lookUp(pool) {
  const { rows: types } = await pool.query(
    `SELECT w.id AS workspace_id, t.id, t.name FROM workspaces w JOIN buckets b ON b.workspace_id = w.id JOIN content_types t ON t.bucket_id = b.id
      WHERE w.name = $1 AND b.name = $2 AND t.name = ANY($3::text[])`,
    [ws, bucket, ['person', 'tag', 'article']],
  );
  if (types.length !== 3)
    throw new Error(`content types person, tag and article not all found in ${ws}/${bucket}: ${JSON.stringify(types)}`);
  const ids = types.map((t) => t.id);
  const { rows: fields } = await pool.query(
    'SELECT content_type_id, name, id FROM field_definitions WHERE content_type_id = ANY($1::int[])',
    [ids],
  );
  const { rows: typed } = await pool.query('SELECT content_type_id FROM typed_tables WHERE content_type_id = ANY($1::int[])', [ids]);
  const { rows: columns } = await pool.query(
    `SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = ANY($1::text[])`,
    [ids.map((id) => `typed_${id}`)],
  );
  const out = { workspaceId: types[0].workspace_id };
  for (const t of types) {
    if (!typed.some((r) => r.content_type_id === t.id))
      throw new Error(`content type ${t.name} (${t.id}) has no typed table (typed_tables)`);
    const table = `typed_${t.id}`;
    const cols = {};
    for (const f of fields.filter((x) => x.content_type_id === t.id)) {
      const column = `f${f.id}`;
      if (!columns.some((c) => c.table_name === table && c.column_name === column))
        throw new Error(`${table} has no column ${column} for field ${t.name}.${f.name}`);
      cols[f.name] = column;
    }
    out[t.name] = { id: t.id, table, cols };
  }
  for (const [type, names] of [
    ['person', ['name']],
    ['tag', ['label']],
    ['article', ['title', 'body', 'rating', 'authors', 'tags', 'cover']],
  ]) {
    for (const n of names) if (!out[type].cols[n]) throw new Error(`no field ${type}.${n}`);
  }
  return out;
}

/** The page statement ($1: per_page): the answer's JSON text, built by PostgreSQL. */
function pageSql({ workspaceId, person, tag, article }) {
  const apiUrl = (alias) => `${literal(`${apiBase}/api/v1/${encodeURIComponent(ws)}/entries/`)} || ${alias}.entry_id`;
  const envelope = (alias, name) =>
    `'id', ${alias}.entry_id, 'api_url', ${apiUrl(alias)}, 'name', ${name}, 'status', ${alias}.status, 'status_label', 'Published', ` +
    `'publish_at', ${alias}.publish_at, 'tags', ${alias}.tags, 'locales', ${alias}.locales`;
  const times = (alias) => `'created_at', ${alias}.created_at, 'updated_at', ${alias}.updated_at, 'lock_version', ${alias}.lock_version`;
  // A relation field: the related entries in the array's order, each a full entry (its one field).
  // The typed columns are COLLATE "C", entries.entry_id the default collation: compared in the
  // latter, or entries' unique index on entry_id is not used.
  const related = (ids, type, field) => `(SELECT coalesce(json_agg(json_build_object(${envelope('r', `p.${type.cols[field]}`)},
            'fields', json_build_object(${literal(field)}, p.${type.cols[field]}), ${times('r')}) ORDER BY u.n), '[]')
          FROM unnest(${ids}) WITH ORDINALITY u(id, n)
          JOIN entries r ON r.entry_id = u.id COLLATE "default"
          JOIN ${type.table} p ON p.entry_pk = r.id AND p.locale = 'en-US'
         WHERE r.status = 'published' AND r.deleted_at IS NULL)`;
  const c = article.cols;
  return `SELECT '{"data":[' || coalesce(string_agg(j, ',' ORDER BY id), '') || ']}' AS t FROM (
  SELECT e.id, json_build_object(${envelope('e', `a.${c.title}`)},
    'fields', json_build_object('title', a.${c.title}, 'body', a.${c.body}, 'rating', a.${c.rating},
      'authors', ${related(`a.${c.authors}`, person, 'name')},
      'tags', ${related(`a.${c.tags}`, tag, 'label')},
      'cover', (SELECT json_build_object('id', f.id, 'name', f.name, 'mime_type', f.mime_type, 'size', f.size, 'tags', f.tags, 'alt_text', f.alt_text,
                                         'created_at', f.created_at, 'updated_at', f.updated_at) FROM files f WHERE f.id = a.${c.cover})),
    ${times('e')})::text AS j
    FROM entries e JOIN ${article.table} a ON a.entry_pk = e.id AND a.locale = 'en-US'
   WHERE e.workspace_id = ${workspaceId} AND e.content_type_id = ${article.id} AND e.deleted_at IS NULL AND e.status = 'published'
   ORDER BY e.id LIMIT $1) x`;
}

const pool = new pg.Pool({ connectionString: databaseUrl, max: 10, options: SERVER_SESSION_OPTIONS });
const text = pageSql(await lookUp(pool));
const query = { name: 'bare_page', text };

const server = http.createServer(async (req, res) => {
  const url = new URL(req.url, 'http://bare');
  const perPage = Number(url.searchParams.get('per_page') ?? 10);
  if (req.method !== 'GET' || url.pathname !== '/' || !Number.isInteger(perPage) || perPage < 1 || perPage > 100) {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end('{"error":"GET /?per_page=1..100"}');
    return;
  }
  try {
    const { rows } = await pool.query({ ...query, values: [perPage] });
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(rows[0].t);
  } catch (err) {
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: err.message }));
  }
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  server.close();
  server.closeAllConnections();
  pool.end().finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();

server.listen(0, '127.0.0.1', () => console.log(String(server.address().port)));
