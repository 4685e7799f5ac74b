// Which locales a workspace has: en-US always, any other one once the workspace configured it.
// The one place of that rule. The documents answer a locale that is not one in two forms, by
// where it is written: a request parameter (`?locale=`, a query's or a batch's `locale`) is a
// `400` "Invalid locale." (http/entry-http.ts `invalidLocale`); a value in a body the documents
// validate field by field (an entry's `locales`, an object's `translations`, the Objects query's
// `locale`) is a `422` on its path, with `unconfiguredLocale` as the message.
import { BASE_LOCALE } from './store';

export const isConfiguredLocale = (locale: string, configured: readonly string[]): boolean => locale === BASE_LOCALE || configured.includes(locale);

export const unconfiguredLocale = (locale: string) => `The locale ${locale} is not configured for this workspace.`;
