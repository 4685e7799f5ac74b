// An archive's parts are lines of JSON text, one row each, which COPY reads and writes as they
// are: as CSV with a quote and a delimiter that JSON text never holds raw (control characters
// are escaped in it), so each line is one field, never quoted (COPY's text format would escape
// and unescape JSON's backslashes). Export and import both move a part's bytes this way.
import { charEscape } from '../sql';

export const QUOTE = 0x01;
export const DELIMITER = 0x02;

/** The options of a COPY of lines (`COPY … WITH ${LINES}`). */
export const LINES = `(FORMAT csv, DELIMITER E'${charEscape(DELIMITER)}', QUOTE E'${charEscape(QUOTE)}')`;
