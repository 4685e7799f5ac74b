// Creates the example's workspace (WORKSPACE, default `blog`) with its content model (authors,
// and posts that refer to one) and an API key for the reader, through the management API with
// the admin token (ADMIN). Prints `KEY=<the key>` (shown once: the server keeps only its hash).
const base = process.env.BASE ?? 'http://localhost:3000';
const workspace = process.env.WORKSPACE ?? 'blog';
const admin = process.env.ADMIN;
if (!admin) throw new Error('ADMIN: the server admin token is required (data/admin_token.secret)');

async function call(method, path, body) {
  const res = await fetch(`${base}/admin/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${admin}`, 'Content-Type': 'application/json' },
    body: body && JSON.stringify(body),
  });
  const answer = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${answer.message}`);
  return answer;
}

await call('POST', '/workspaces', { name: workspace });
const types = `/workspaces/${workspace}/buckets/general/content-types`;
await call('POST', types, { name: 'author', fields: [{ name: 'name', type: 'text', required: true }] });
await call('POST', types, {
  name: 'post',
  fields: [
    { name: 'title', type: 'text', required: true },
    { name: 'views', type: 'number', indexed: true },
    { name: 'published_on', type: 'date' },
    { name: 'author', type: 'relation', targets: ['author'] },
  ],
});
const user = await call('POST', `/workspaces/${workspace}/users`, {
  email: 'reader@example.com',
  permissions: ['list-entries', 'view-entry', 'create-entry'],
});
const { key } = await call('POST', `/workspaces/${workspace}/api-keys`, {
  name: 'blog-reader',
  user_id: user.id,
  abilities: ['entries:read', 'entries:query', 'entries:write'],
});
console.log(`KEY=${key}`);
