// Field errors as data (lib/field-errors.ts): rendered once, placeholders replaced in one pass,
// prefixes as renames of paths.
import {
  fieldDetail,
  fieldError,
  fieldErrors,
  moveUnder,
  oneFieldError,
  renderFieldError,
  renderFieldErrors,
} from '../src/lib/field-errors';
import { validationFailed } from '../src/http/errors';

describe('field errors', () => {
  it('renders :attribute as the path and :name as its parameter', () => {
    expect(renderFieldError('fields.title', fieldError('required', 'The :attribute field is required.'))).toBe(
      'The fields.title field is required.',
    );
    expect(
      renderFieldError('locales.0', fieldError('locale', 'The locale :locale is not configured for this workspace.', { locale: 'fr-FR' })),
    ).toBe('The locale fr-FR is not configured for this workspace.');
    expect(renderFieldError('publish_at', fieldDetail('date', 'must be a valid date-time'))).toBe(
      'The publish_at field must be a valid date-time.',
    );
  });

  it('never reads user text in a path or a parameter as a placeholder', () => {
    const e = fieldError('repeated', 'The :attribute field names the query :name more than once.', { name: ':attribute :name' });
    expect(renderFieldError('queries', e)).toBe('The queries field names the query :attribute :name more than once.');
    expect(renderFieldError(':name.:attribute', fieldError('required', 'The :attribute field is required.'))).toBe(
      'The :name.:attribute field is required.',
    );
    // A parameter named like an inherited member is not one.
    expect(renderFieldError('x', fieldError('r', 'The :constructor :attribute.'))).toBe('The :constructor x.');
  });

  it('moves errors under a prefix by renaming their paths: the messages follow', () => {
    const inner = fieldErrors();
    inner['fields.title'] = [fieldError('required', 'The :attribute field is required.')];
    inner.expected_version = [fieldError('stale', 'The :attribute is stale: the current version is :version.', { version: 3 })];
    const moved = moveUnder(inner, 'operations.2.');
    expect({ ...renderFieldErrors(moved) }).toEqual({
      'operations.2.fields.title': ['The operations.2.fields.title field is required.'],
      'operations.2.expected_version': ['The operations.2.expected_version is stale: the current version is 3.'],
    });
    // The original is unchanged.
    expect(Object.keys(inner)).toEqual(['fields.title', 'expected_version']);
  });

  it('answers a 422 with the rendered map and the first message', () => {
    const err = validationFailed(oneFieldError('__proto__', fieldError('required', 'The :attribute field is required.')));
    expect(err.status).toBe(422);
    expect(err.body.message).toBe('The __proto__ field is required.');
    expect(Object.entries(err.body.errors!)).toEqual([['__proto__', ['The __proto__ field is required.']]]);
  });
});
