// The output of one command over GET .../commands/{cid}/stream, as an async
// iterator, reopening a dropped socket where it left off.
//
// Wire format (API.md, "Streams"): binary server messages are a 1-byte tag
// (1 stdout, 2 stderr) + bytes; text messages are {"type":"truncated","bytes":N}
// and {"type":"exit",...} before a close 1000. `since` counts chunk bytes of both
// streams (tags not counted), which is exactly what this class counts in
// `received`, so a reconnect asks for since=received and gets no gap and no repeat.
import { errorFor } from './errors.js';

const TAG_STDIN = 0;
// A socket not open by then is given up and counted as a failed attempt
// (a browser offers no handshake timeout of its own).
const OPEN_TIMEOUT_MS = 15000;

/** Close codes after which reopening cannot help (docs/api.md: 4000 + HTTP status). */
export function isFatalClose(code) {
	return code >= 4400 && code < 4500;
}
const STREAM_OF_TAG = { 1: 'stdout', 2: 'stderr' };

/** Bytes of a binary message, whatever shape the WebSocket implementation gives. */
export function messageBytes(data) {
	if (data instanceof ArrayBuffer) return new Uint8Array(data);
	if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
	if (Array.isArray(data)) { // ws can hand over fragments as a list of Buffers
		const n = data.reduce((a, b) => a + b.byteLength, 0), out = new Uint8Array(n);
		let at = 0;
		for (const b of data) { out.set(b, at); at += b.byteLength; }
		return out;
	}
	throw new TypeError('unexpected WebSocket binary message type');
}

export class CommandStream {
	/** connect(params): a promise of a WebSocket on the stream with those query parameters;
	 *  since: bytes the caller already has. */
	constructor(connect, { since = 0, maxReconnects = 8, input = true } = {}) {
		this.connect = connect;
		this.input = input;          // may send stdin and signals (its token allows it)
		this.attempt = 0;            // numbers socket openings; a stale one is dropped
		this.received = since;       // chunk bytes delivered so far (the resume offset)
		this.maxReconnects = maxReconnects;
		this.reconnects = 0;         // how many times a socket was reopened
		this.failures = 0;           // consecutive reopenings with nothing received
		this.exit = null;            // the exit message once it came
		this.queue = [];             // events not yet taken by the iterator
		this.waiters = [];           // iterator next() calls waiting for an event
		this.ended = false;
		this.error = null;
		this.pendingSends = [];      // sent before the socket was open
		this.ws = null;
		this.open();
	}

	async open() {
		const attempt = ++this.attempt;
		let ws;
		try {
			ws = await this.connect({ since: this.received });
		} catch (e) {
			// No socket at all (the token request failed): the same decision as a dropped one.
			if (!this.ended && attempt === this.attempt) this.onClose({ code: 0, reason: e.message }, e);
			return;
		}
		if (this.ended || attempt !== this.attempt) {
			try { ws.close(1000); } catch { /* never opened */ }
			return;
		}
		this.ws = ws;
		const openTimer = setTimeout(() => { if (ws === this.ws && ws.readyState === 0) ws.close(); }, OPEN_TIMEOUT_MS);
		ws.onopen = () => {
			clearTimeout(openTimer);
			if (ws !== this.ws) return;
			for (const m of this.pendingSends.splice(0)) ws.send(m);
		};
		ws.onmessage = (ev) => { if (ws === this.ws) this.onMessage(ev.data); };
		ws.onerror = () => { /* a close event follows; reconnecting is decided there */ };
		ws.onclose = (ev) => { clearTimeout(openTimer); if (ws === this.ws) this.onClose(ev); };
	}

	onMessage(data) {
		if (typeof data === 'string') {
			let msg;
			try { msg = JSON.parse(data); } catch { return; }
			if (msg.type === 'exit') {
				this.exit = msg;
				this.push({ type: 'exit', exit_code: msg.exit_code ?? null, signal: msg.signal ?? null });
			} else if (msg.type === 'error') {
				this.lastError = msg.error || {};
			} else if (msg.type === 'truncated') {
				// Those bytes are gone for good; resuming must start after them.
				this.received += Number(msg.bytes) || 0;
				this.push({ type: 'truncated', bytes: Number(msg.bytes) || 0 });
			}
			return;
		}
		const bytes = messageBytes(data);
		const stream = STREAM_OF_TAG[bytes[0]];
		if (!stream) return;
		const chunk = bytes.slice(1);
		this.push({ type: stream, data: chunk, offset: this.received });
		this.received += chunk.length;
		this.failures = 0;
	}

	onClose(ev, error = null) {
		this.ws = null;
		if (this.ended) return;
		if (this.exit) return this.finish();
		if (error && error.status >= 400 && error.status < 500) return this.finish(error);
		if (isFatalClose(ev.code)) {
			// The same error a REST call would throw: the close code is 4000 + the HTTP status.
			const e = this.lastError || {};
			const err = errorFor(ev.code - 4000, e.code || `close_${ev.code}`,
				e.message || `command stream refused (close ${ev.code})`);
			err.closeCode = ev.code;
			return this.finish(err);
		}
		// Dropped before the exit message: reopen from `received`, backing off
		// while attempts bring nothing.
		if (this.failures >= this.maxReconnects) {
			return this.finish(errorFor(0, 'connection_failed', `command stream closed (code ${ev.code}) after ${this.failures} attempts`));
		}
		const delay = Math.min(2000, 100 * 2 ** this.failures);
		this.failures++;
		this.reconnects++;
		setTimeout(() => { if (!this.ended) this.open(); }, delay);
	}

	/** Drops the current socket and resumes on a new one (also what a network drop does). */
	reconnect() {
		const old = this.ws;
		if (!old || this.ended) return;
		this.ws = null;
		old.onmessage = old.onclose = old.onopen = null;
		try { old.close(4000, 'reconnect'); } catch { /* already closing */ }
		this.reconnects++;
		this.open();
	}

	send(message) {
		if (this.ws && this.ws.readyState === 1) this.ws.send(message);
		else this.pendingSends.push(message);
	}

	/** Refused here, not by a close of the gateway: the stream was opened read-only. */
	needInput(what) {
		if (!this.input) throw new TypeError(`${what} needs a stream opened with { input: true }`);
	}

	/** Bytes (string or Uint8Array) for the command's stdin. */
	write(data) {
		this.needInput('write');
		const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
		const m = new Uint8Array(bytes.length + 1);
		m[0] = TAG_STDIN;
		m.set(bytes, 1);
		this.send(m);
	}

	/** Closes the command's stdin. */
	end() { this.needInput('end'); this.send(JSON.stringify({ type: 'stdin_eof' })); }

	/** Signals the command through the stream (e.g. 'SIGINT'). */
	kill(signal = 'SIGINT') { this.needInput('kill'); this.send(JSON.stringify({ type: 'kill', signal })); }

	/** Stops reading; the command itself keeps running. */
	close() {
		const ws = this.ws;
		this.ws = null;
		this.attempt++; // a socket still being opened is closed when it comes
		if (ws) {
			ws.onmessage = ws.onclose = ws.onopen = null;
			try { ws.close(1000); } catch { /* already closed */ }
		}
		this.finish();
	}

	push(ev) {
		const w = this.waiters.shift();
		if (w) w.resolve({ value: ev, done: false });
		else this.queue.push(ev);
	}

	finish(error = null) {
		if (this.ended) return;
		this.ended = true;
		this.error = error;
		for (const w of this.waiters.splice(0)) {
			if (error) w.reject(error);
			else w.resolve({ value: undefined, done: true });
		}
	}

	next() {
		if (this.queue.length) return Promise.resolve({ value: this.queue.shift(), done: false });
		if (this.ended) return this.error ? Promise.reject(this.error) : Promise.resolve({ value: undefined, done: true });
		return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
	}

	return() {
		this.close();
		this.queue.length = 0;
		return Promise.resolve({ value: undefined, done: true });
	}

	[Symbol.asyncIterator]() { return this; }
}
