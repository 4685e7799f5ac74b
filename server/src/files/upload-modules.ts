// The ES modules of the upload path (type detection, the streaming JSON parser), imported once
// by whichever comes first: the first upload or the warm-up after the server answers (app.ts).
// One shared import: loaded twice side by side mid-request, they failed now and then under jest's
// VM modules.
const load = () =>
  Promise.all([import('file-type'), import('stream-json/parser.js')]).then(([fileType, jsonParser]) => ({ fileType, jsonParser }));

let loading: ReturnType<typeof load> | undefined;

/** The upload path's modules; a failed import is tried again by the next caller. */
export const uploadModules = () =>
  (loading ??= load().catch((err: unknown) => {
    loading = undefined;
    throw err;
  }));
