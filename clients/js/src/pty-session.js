// A terminal in a sandbox over GET /v1/sandboxes/{id}/pty (API.md, "Streams"):
// binary both ways = terminal bytes; client text messages resize, pause and
// resume (flow-control.js says when); server text {"type":"exit",...} when
// the shell ends. Closing the session ends the shell.
import { messageBytes } from './command-stream.js';

export class PtySession {
	/** socket: a WebSocket, or a promise of one (it may wait for a stream token). */
	constructor(socket) {
		this.ws = null;
		this.exit = null;
		this.closing = false;
		this.listeners = { data: [], exit: [], error: [], close: [] };
		let closedWith;
		this.closed = new Promise((resolve) => { closedWith = resolve; });
		const ended = (info) => {
			if (this.ended) return;
			this.ended = true;
			this.emit('close', info);
			closedWith(info);
		};
		this.opened = Promise.resolve(socket).then((ws) => new Promise((resolve, reject) => {
			this.ws = ws;
			ws.onopen = () => resolve(this);
			ws.onerror = () => { /* the close event follows */ };
			ws.onclose = (ev) => {
				reject(new Error(`terminal socket closed before it opened (code ${ev.code})`));
				ended({ code: ev.code, reason: ev.reason });
			};
			ws.onmessage = (ev) => this.onMessage(ev.data);
			if (this.closing) ws.close(1000);
		}));
		this.opened.catch((e) => ended({ code: 0, reason: e.message })); // also: no unhandled rejection
	}

	onMessage(data) {
		if (typeof data === 'string') {
			let msg;
			try { msg = JSON.parse(data); } catch { return; }
			if (msg.type === 'exit') {
				this.exit = msg;
				this.emit('exit', msg);
			} else if (msg.type === 'error') {
				this.emit('error', msg.error || {});
			}
			return;
		}
		this.emit('data', messageBytes(data));
	}

	/** event: 'data' (Uint8Array of terminal output), 'exit' ({exit_code, signal}), 'error' ({code, message}), 'close' ({code, reason}). */
	on(event, fn) {
		this.listeners[event].push(fn);
		return () => { this.listeners[event] = this.listeners[event].filter((f) => f !== fn); };
	}

	emit(event, arg) { for (const fn of this.listeners[event]) fn(arg); }

	get isOpen() { return !!this.ws && this.ws.readyState === 1; }

	/** Keystrokes: a string (sent as UTF-8) or bytes. */
	write(data) {
		if (!this.isOpen) return;
		this.ws.send(typeof data === 'string' ? new TextEncoder().encode(data) : data);
	}

	sendControl(msg) { if (this.isOpen) this.ws.send(JSON.stringify(msg)); }
	resize(cols, rows) { this.sendControl({ type: 'resize', cols, rows }); }
	/** Ask the gateway to stop reading the PTY until resume(). */
	pause() { this.sendControl({ type: 'pause' }); }
	resume() { this.sendControl({ type: 'resume' }); }

	close() {
		this.closing = true;
		if (this.ws) {
			try { this.ws.close(1000); } catch { /* already closed */ }
		}
		return this.closed;
	}
}
