import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`; `.ci/run` installs it when missing). */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * A headless Chromium driven by playwright-core. The flags keep it off the network it cannot
 * reach here (background services, component updates) and let it run as root in a container.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
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
}
