// Which locales a workspace has: en-US always, any other one once the workspace configured it.
// The one place of that rule. The documents answer a locale that is not one in two forms, by
// where it is written: a request parameter (`?locale=`, a query's or a batch's `locale`) is
// `invalid_locale` (a `400` "Invalid locale."); a value in a body the documents validate field by
// field (an entry's `locales`, an object's `translations`, the Objects query's `locale`) is a
// `422` on its path, with `unconfiguredLocale` as the message.
import { DomainError } from '../errors';
import { fieldError, type FieldError } from '../../lib/field-errors';
import { BASE_LOCALE } from './store';

/** A workspace's locale list: `en-US` first and always present, then the others in the given order, without duplicates. */
export const normalizeLocales = (locales: readonly string[] = []): string[] => [...new Set([BASE_LOCALE, ...locales])];

export const isConfiguredLocale = (locale: string, configured: readonly string[]): boolean =>
  locale === BASE_LOCALE || configured.includes(locale);

export const unconfiguredLocale = (locale: string): FieldError =>
  fieldError('locale', 'The locale :locale is not configured for this workspace.', { locale });

const invalidLocale = () => new DomainError('invalid_locale');

/** A read locale parameter: `en-US`, a configured one or `*`. */
export function readLocale(locale: string | undefined, locales: readonly string[]): string {
  const value = locale ?? BASE_LOCALE;
  if (value !== '*' && !isConfiguredLocale(value, locales)) throw invalidLocale();
  return value;
}

/** A write locale parameter: `en-US` or a configured one. */
export function writeLocale(locale: string | undefined, locales: readonly string[]): string {
  const value = locale ?? BASE_LOCALE;
  if (!isConfiguredLocale(value, locales)) throw invalidLocale();
  return value;
}
