// A terminal in a sandbox over GET /v1/sandboxes/{id}/pty (API.md, "Streams"):
// binary both ways = terminal bytes; client text messages resize, pause and
// resume (flow-control.js says when); server text {"type":"exit",...} when
// the shell ends. Closing the session ends the shell.
import { messageBytes } from './command-stream.js';

export class PtySession {
	constructor(ws) {
		this.ws = ws;
		this.exit = null;
		this.listeners = { data: [], exit: [], error: [], close: [] };
		this.opened = new Promise((resolve, reject) => {
			ws.onopen = () => resolve(this);
			this.rejectOpen = reject;
		});
		this.opened.catch(() => {}); // a caller that never awaits it must not see an unhandled rejection
		this.closed = new Promise((resolve) => {
			ws.onclose = (ev) => {
				this.rejectOpen(new Error(`terminal socket closed before it opened (code ${ev.code})`));
				this.emit('close', { code: ev.code, reason: ev.reason });
				resolve({ code: ev.code, reason: ev.reason });
			};
		});
		ws.onerror = () => { /* the close event follows */ };
		ws.onmessage = (ev) => {
			if (typeof ev.data === 'string') {
				let msg;
				try { msg = JSON.parse(ev.data); } catch { return; }
				if (msg.type === 'exit') {
					this.exit = msg;
					this.emit('exit', msg);
				} else if (msg.type === 'error') {
					this.emit('error', msg.error || {});
				}
				return;
			}
			this.emit('data', messageBytes(ev.data));
		};
	}

	/** event: 'data' (Uint8Array of terminal output), 'exit' ({exit_code, signal}), 'error' ({code, message}), 'close' ({code, reason}). */
	on(event, fn) {
		this.listeners[event].push(fn);
		return () => { this.listeners[event] = this.listeners[event].filter((f) => f !== fn); };
	}

	emit(event, arg) { for (const fn of this.listeners[event]) fn(arg); }

	get isOpen() { return this.ws.readyState === 1; }

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
		try { this.ws.close(1000); } catch { /* already closed */ }
		return this.closed;
	}
}
