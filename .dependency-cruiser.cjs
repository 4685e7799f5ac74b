// `npm run lint`'s module boundaries (with ESLint, eslint.config.mjs). The server's layers:
//   lib/, db/, generated/: building blocks, importing no layer above them;
//   core/: the domain (entries, objects' store, queries, pipelines), importing neither the HTTP
//     layer nor a resource;
//   http/: the HTTP layer (routing, validation, auth, errors as bodies);
//   resources (admin/, app-auth/, email/, entries/, files/, images/, objects/, pipelines/,
//     public/, webhooks/): route modules over core/ and http/, never one another;
//   app.ts, main.ts and the process entry points wire them together.
const RESOURCES = '(admin|app-auth|email|entries|files|images|objects|pipelines|public|webhooks)';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-cycles',
      comment:
        'An import cycle makes load order matter. (Cycles of type-only imports vanish at run time: AppContext names every service it holds.)',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'core-is-not-http',
      comment: 'core/ knows nothing of HTTP: no koa, no http/ module, no resource.',
      severity: 'error',
      from: { path: '^server/src/core/' },
      to: { path: [`^server/src/http/`, `^server/src/${RESOURCES}/`, '^node_modules/(koa|@koa/)'] },
    },
    {
      name: 'core-has-its-own-context',
      comment: 'The core receives CoreContext (core/context.ts), not the application: AppContext names the HTTP layer.',
      severity: 'error',
      from: { path: '^server/src/core/' },
      to: { path: '^server/src/context\\.ts$' },
    },
    {
      name: 'lib-is-a-building-block',
      comment: 'lib/ holds building blocks: it imports packages and other lib/ modules, nothing of the server above it.',
      severity: 'error',
      from: { path: '^server/src/lib/' },
      to: { path: '^server/src/', pathNot: '^server/src/lib/' },
    },
    {
      name: 'http-serves-resources',
      comment: 'The HTTP layer is shared by the resources: it imports core/, never a resource.',
      severity: 'error',
      from: { path: '^server/src/http/' },
      to: { path: `^server/src/${RESOURCES}/` },
    },
    {
      name: 'koa-at-the-edge',
      comment: 'Only the HTTP layer, the route modules and the entry points know Koa.',
      severity: 'error',
      from: { path: '^server/src/', pathNot: `^server/src/(http/|${RESOURCES}/|app\\.ts$)` },
      to: { path: '^node_modules/(koa|@koa/)' },
    },
    {
      name: 'resources-stay-apart',
      comment: 'A resource imports core/ and http/, never another resource.',
      severity: 'error',
      from: { path: `^server/src/${RESOURCES}/` },
      to: { path: `^server/src/${RESOURCES}/`, pathNot: '^server/src/$1/' },
    },
    {
      name: 'server-not-sdk-sources',
      comment: 'The server uses the SDK as a package (its generated types, its typegen), not its source tree.',
      severity: 'error',
      from: { path: '^server/src/' },
      to: { path: '^sdk/src/' },
    },
    {
      name: 'sdk-not-server',
      comment: 'The SDK is published alone.',
      severity: 'error',
      from: { path: '^sdk/src/' },
      to: { path: '^server/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|generated/prisma)/' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
