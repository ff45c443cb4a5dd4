// The Output panel: each chunk of stdout or stderr is appended the moment it
// arrives, as its own text in its stream's colour (class out-stdout /
// out-stderr), then the exit code. Each stream has its own UTF-8 decoder so
// a character split across two chunks is still decoded whole.

export class RunOutput {
	constructor(pre, exitLabel) {
		this.pre = pre;
		this.exitLabel = exitLabel;
		this.decoders = {};
	}

	clear() {
		this.pre.textContent = '';
		this.decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
		this.setExit('running', '');
	}

	/** stream: 'stdout' | 'stderr'; bytes: Uint8Array. */
	append(stream, bytes) {
		this.appendText(stream, this.decoders[stream].decode(bytes, { stream: true }));
	}

	appendText(stream, text) {
		if (!text) return;
		const stickToBottom = this.pre.scrollTop + this.pre.clientHeight >= this.pre.scrollHeight - 4;
		const last = this.pre.lastElementChild;
		if (last && last.dataset.stream === stream && last.childNodes.length < 64) {
			// Same stream as the previous chunk: one more text node in its span keeps the DOM small.
			last.appendChild(document.createTextNode(text));
		} else {
			const span = document.createElement('span');
			span.className = `out-${stream}`;
			span.dataset.stream = stream;
			span.textContent = text;
			this.pre.appendChild(span);
		}
		if (stickToBottom) this.pre.scrollTop = this.pre.scrollHeight;
	}

	note(text) {
		const span = document.createElement('span');
		span.className = 'out-note';
		span.textContent = text;
		this.pre.appendChild(span);
	}

	/** {exit_code, signal} from the stream's exit message. */
	exited({ exit_code, signal }) {
		for (const s of ['stdout', 'stderr']) this.appendText(s, this.decoders[s].decode()); // flush a cut-off character
		if (signal) this.setExit('signal', `killed by ${signal}`, { signal });
		else this.setExit(exit_code === 0 ? 'ok' : 'error', `exit code ${exit_code}`, { exitCode: String(exit_code) });
	}

	setExit(state, text, data = {}) {
		this.exitLabel.textContent = text;
		this.exitLabel.dataset.state = state;
		delete this.exitLabel.dataset.exitCode;
		delete this.exitLabel.dataset.signal;
		Object.assign(this.exitLabel.dataset, data);
	}
}
