/**
 * Debian's Chromium driven by playwright-core, kept off the network: headless, no sandbox (CI
 * containers run as root), no QUIC, no background or component traffic, a fresh profile each
 * launch. Where /usr/bin/chromium is missing the browser tests are skipped with one loud line;
 * under CI=true they must run, so a missing browser fails them instead.
 *
 * @example
 *   const skip = chromiumSkip();
 *   test('…', { skip }, async () => { const browser = await launchChromium(); … })
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Screenshots land here (git-ignored). */
export const ARTIFACTS_DIR = 'test-artifacts';

/** false when the browser tests can run; otherwise the reason to skip (printed once, loudly). */
export function chromiumSkip(): string | false {
  if (existsSync(CHROMIUM_PATH)) return false;
  if (process.env.CI === 'true') throw new Error(`CI=true but ${CHROMIUM_PATH} is missing: install it (apt-get install -y chromium).`);
  const reason = `${CHROMIUM_PATH} not found: browser tests SKIPPED (apt-get install -y chromium to run them)`;
  console.error(`\n!!!!! ${reason} !!!!!\n`);
  return reason;
}

export interface LaunchedChromium {
  /** The browser's one context, on the fresh profile: open pages with `context.newPage()`. */
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launchChromium(): Promise<LaunchedChromium> {
  const profile = mkdtempSync(join(tmpdir(), 'switchyard-chromium-'));
  // Playwright passes the profile as --user-data-dir itself (it refuses the flag in `args`).
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** Save a full-page screenshot as test-artifacts/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS_DIR, `${name}.png`), fullPage: true });
}

/** Collect the page's Content-Security-Policy violations (they show up as console errors). */
export function cspViolations(page: Page): string[] {
  const violations: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) violations.push(message.text());
  });
  return violations;
}
