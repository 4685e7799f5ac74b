// A small blog reader: writes an author and their posts in one atomic batch, lists the published
// posts, queries the most read ones with their author's name, and reads one back, all through the
// typed client, whose types come from the workspace's own content model (src/content.ts, written
// by `npm run types`): a misspelt type, field or path is a compile error.
import { contentClient, createClient } from '@workspace-api/sdk';
import type { Content } from './content.js';

const { BASE = 'http://localhost:3000', KEY, WORKSPACE = 'blog' } = process.env;
if (!KEY) throw new Error('KEY: an API key of the workspace is required (npm run setup prints one)');
const blog = contentClient<Content>(createClient({ baseUrl: BASE, apiKey: KEY }), WORKSPACE).entries('general');

// Write: an author and two posts, committed together; the posts refer to the author by its `ref`.
const written = await blog.batch([
  blog.op.create('author', { ref: 'ada', fields: { name: 'Ada Lovelace' }, status: 'published' }),
  blog.op.create('post', {
    fields: { title: 'Notes on the engine', views: 120, published_on: '2026-10-12', author: { $ref: 'ada' } },
    status: 'published',
  }),
  blog.op.create('post', {
    fields: { title: 'Poetical science', views: 45, published_on: '2026-11-03', author: { $ref: 'ada' } },
    status: 'published',
  }),
]);
if (written.error) throw new Error(written.error.message);
const [, notes] = written.data.data;

// List: the published posts, rendered.
const posts = await blog.list('post');
if (posts.error) throw new Error(posts.error.message);
console.log(`${posts.data.length} published posts: ${posts.data.map((p) => p.fields.title).join(', ')}`);

// Query: posts read more than 50 times, most read first, with their author's name.
const popular = await blog.query({
  type: 'post',
  fields: ['title', 'views', 'author.name'],
  filter: { views: { gt: 50 } },
  sort: [{ field: 'views', direction: 'desc' }],
});
if (popular.error) throw new Error(popular.error.message);
for (const post of popular.data.data) console.log(`popular: ${post.title} (${post.views} views) by ${post.author?.name ?? 'nobody'}`);

// Read one back by its ID.
const one = await blog.get('post', notes.id);
if (one.error) throw new Error(one.error.message);
console.log(`read back: ${one.data.fields.title}, published on ${one.data.fields.published_on}`);
