// Headless Chromium (Debian's, through playwright-core) loads a preview
// page whose script opens a WebSocket to its own origin; prints the text
// the page shows once the echo came back. argv: URL gateway-port.
'use strict';
const { chromium } = require('playwright-core');

(async () => {
  const url = new URL(process.argv[2]);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync',
           // *.localhost resolves to loopback in Chromium already; make sure
           `--host-resolver-rules=MAP ${url.hostname} 127.0.0.1`],
  });
  try {
    const page = await browser.newPage();
    await page.goto(url.href);
    await page.waitForFunction(() => document.getElementById('out').textContent !== 'waiting',
                               null, { timeout: 15000 });
    console.log(await page.textContent('#out'));
  } finally {
    await browser.close();
  }
})().catch((e) => { console.log('error ' + e.message); process.exit(1); });
