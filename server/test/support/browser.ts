// Real headless Chromium for tests of the rendered pages (playwright-core drives the system
// Chromium; nothing is downloaded). Browser tests are skipped, with the reason printed, in
// embedded mode and when no Chromium is installed; REQUIRE_BROWSER=1 turns a missing Chromium
// into a failure instead.
import { statSync, accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { testMode } from './env';

export const chromiumPath = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

/** Quiet, offline-friendly flags: no sandbox (containers), no GPU, no background traffic. */
export const chromiumArgs = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

function chromiumMissing(): string | undefined {
  try {
    if (!statSync(chromiumPath).isFile()) return `${chromiumPath} is not a file`;
    accessSync(chromiumPath, constants.X_OK);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT'
      ? `no Chromium at ${chromiumPath}`
      : `Chromium at ${chromiumPath} is not usable: ${(err as Error).message}`;
  }
}

/**
 * Why browser tests cannot run in this environment, or undefined when they can. Throws when
 * REQUIRE_BROWSER=1 and Chromium is missing, so that the test file fails to run.
 */
export function browserSkipReason(): string | undefined {
  if (testMode === 'pglite') return 'embedded mode (PGlite): browser tests are skipped';
  const missing = chromiumMissing();
  if (!missing) return undefined;
  if (process.env.REQUIRE_BROWSER === '1') {
    throw new Error(`REQUIRE_BROWSER=1 but ${missing}; install Chromium or set CHROMIUM_PATH`);
  }
  return `${missing} (set CHROMIUM_PATH to use another browser, REQUIRE_BROWSER=1 to fail instead of skipping)`;
}

/**
 * `describe` for browser tests: runs them, or skips them and prints why (see browserSkipReason).
 * Evaluated when the test file is loaded.
 */
export function describeWithBrowser(name: string, fn: () => void): void {
  const reason = browserSkipReason();
  if (reason === undefined) {
    describe(name, fn);
  } else {
    console.log(`Skipping "${name}": ${reason}`);
    describe.skip(name, fn);
  }
}

export function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath, args: chromiumArgs, timeout: 30_000 });
}

/** True for the hosts a test server listens on; every other request is blocked by the tests. */
export function isLocalUrl(url: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return false;
  }
  // data:, blob: and about: never reach the network.
  if (['data:', 'blob:', 'about:'].includes(parsed.protocol)) return true;
  return ['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname);
}
