// The Terminal tab: xterm.js fitted to its pane, on the sandbox's PTY
// WebSocket. Output is acknowledged as xterm renders it (term.write's
// callback) and RenderWatermark pauses the gateway's reading of the PTY while
// too much is unrendered, so `yes` cannot flood the tab and Ctrl-C acts at once.
import { Terminal } from '@xterm/xterm';
import { FitAddon } from '@xterm/addon-fit';
import '@xterm/xterm/css/xterm.css';
import { RenderWatermark } from '../../clients/js/src/client.js';
import { mirrorInlineStyles } from './csp-styles.js';

export class TerminalPane {
	constructor(container) {
		this.container = container;
		this.term = new Terminal({
			cursorBlink: true,
			fontFamily: 'ui-monospace, "DejaVu Sans Mono", monospace',
			fontSize: 14,
			scrollback: 5000,
			theme: { background: '#111418' },
		});
		this.fit = new FitAddon();
		this.term.loadAddon(this.fit);
		mirrorInlineStyles(container);
		this.term.open(container);
		this.session = null;
		this.sandbox = null;
		this.term.onData((d) => {
			if (this.session) this.session.write(d);
			// After the shell ended, a key press opens a new one (closing a terminal ends its shell).
			else if (this.sandbox && this.sandbox.status === 'running' && !this.connecting) this.connect(this.sandbox).catch(() => {});
		});
		this.term.onBinary((d) => this.session && this.session.write(Uint8Array.from(d, (c) => c.charCodeAt(0))));
		this.term.onResize(({ cols, rows }) => this.session && this.session.resize(cols, rows));
		// Refit whenever the pane changes size (window resize, tab shown).
		new ResizeObserver(() => this.refit()).observe(container);
	}

	refit() {
		if (this.container.offsetWidth > 0 && this.container.offsetHeight > 0) this.fit.fit();
	}

	/** Opens a shell in `sandbox` (closing any earlier one). */
	async connect(sandbox) {
		this.disconnect();
		this.sandbox = sandbox;
		this.connecting = true;
		this.refit();
		this.term.reset();
		const session = sandbox.pty({ cmd: 'bash', cols: this.term.cols, rows: this.term.rows });
		this.session = session;
		const mark = new RenderWatermark({ onPause: () => session.pause(), onResume: () => session.resume() });
		this.watermark = mark;
		session.on('data', (bytes) => {
			mark.written(bytes.length);
			this.term.write(bytes, () => mark.rendered(bytes.length));
		});
		session.on('exit', (e) => {
			this.term.write(`\r\n[shell exited${e.signal ? ` by ${e.signal}` : `, code ${e.exit_code}`}; press a key for a new one]\r\n`);
			// The shell is over now, not when the socket's close event comes: a browser fires
			// that only once the server has closed the connection, which a busy gateway can do
			// much later, and a key pressed meanwhile would go to a socket already closing.
			if (this.session === session) {
				this.session = null;
				session.close();
			}
		});
		session.on('close', (c) => {
			if (this.session === session) {
				this.session = null;
				if (!session.exit) this.term.write(`\r\n[terminal connection closed (${c.code}); press a key to reconnect]\r\n`);
			}
		});
		try {
			await session.opened;
		} finally {
			this.connecting = false;
		}
		this.term.focus();
	}

	/** Closes the shell; forget=true also forgets the sandbox (it stopped). */
	disconnect(forget = false) {
		if (forget) this.sandbox = null;
		const s = this.session;
		this.session = null;
		if (s) s.close();
	}
}
