// The Output panel: each chunk of stdout or stderr is appended the moment it
// arrives, in its stream's colour (class out-stdout / out-stderr), then the
// exit code. Each stream has its own UTF-8 decoder so a character split
// across two chunks is still decoded whole.
//
// Programs can print far faster than a page can lay text out, so:
// - text goes into blocks of ~16 KB that end at a newline: appending lays out
//   only the last block, not everything printed so far;
// - only the last ~1 MB is kept (whole blocks are dropped from the top, with a
//   note saying how much); the sandbox keeps all of it, `since` reads it back;
// - chunks that arrive within one frame are put on the page together when
//   the frame is drawn (a program printing 100-byte lines sends thousands of
//   messages a second; one DOM update each would starve the page);
// - the view follows the end, and not when the reader has scrolled up.

const BLOCK_CHARS = 16 * 1024;
const KEEP_CHARS = 1024 * 1024;

export class RunOutput {
	constructor(pre, exitLabel) {
		this.pre = pre;
		this.exitLabel = exitLabel;
		this.follow = true;
		this.scrollQueued = false;
		// Only a scroll the reader made decides following: blocks off screen change height
		// when they are laid out (content-visibility), which scrolls the panel by itself.
		this.readerAt = -Infinity;
		const intent = () => { this.readerAt = performance.now(); };
		for (const type of ['wheel', 'touchstart', 'keydown', 'pointerdown']) pre.addEventListener(type, intent, { passive: true });
		pre.addEventListener('scroll', () => {
			if (performance.now() - this.readerAt > 1000) return;
			this.follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 4;
		});
		this.clear();
	}

	clear() {
		this.pre.textContent = '';
		this.lostBytes = 0;
		delete this.pre.dataset.lostBytes;
		this.blocks = [];      // [{ el, chars }]
		this.chars = 0;        // characters in the panel
		this.dropped = 0;      // characters dropped from the top
		this.marker = null;
		this.pending = [];     // [cls, text] runs not yet on the page
		this.pendingChars = 0;
		this.follow = true;
		this.decoders = { stdout: new TextDecoder(), stderr: new TextDecoder() };
		this.setExit('running', '');
	}

	/** stream: 'stdout' | 'stderr'; bytes: Uint8Array. */
	append(stream, bytes) {
		this.appendText(stream, this.decoders[stream].decode(bytes, { stream: true }));
	}

	appendText(stream, text, cls = `out-${stream}`) {
		if (!text) return;
		const last = this.pending[this.pending.length - 1];
		if (last && last[0] === cls) last[1] += text;
		else this.pending.push([cls, text]);
		this.pendingChars += text.length;
		// A hidden tab draws no frames: do not let what waits for one grow without bound.
		if (this.pendingChars > KEEP_CHARS) this.flush();
		else this.scrollSoon();
	}

	/** Puts the waiting runs on the page, drops what exceeds KEEP_CHARS, follows the end. */
	flush() {
		for (const [cls, text] of this.pending.splice(0)) this.place(cls, text);
		this.pendingChars = 0;
		while (this.chars > KEEP_CHARS && this.blocks.length > 1) this.dropFirstBlock();
		this.toEnd();
	}

	/** Scrolls to the end, and again on later frames until the end stays put: blocks
	 *  laid out by the scroll itself (content-visibility) change the height again. */
	toEnd(framesLeft = 8) {
		if (!this.follow) return;
		const pre = this.pre;
		pre.scrollTop = pre.scrollHeight;
		if (framesLeft <= 0 || this.settling) return;
		this.settling = true;
		requestAnimationFrame(() => {
			this.settling = false;
			if (pre.scrollTop + pre.clientHeight < pre.scrollHeight - 4) this.toEnd(framesLeft - 1);
		});
	}

	/** Appends a run: a block is filled to BLOCK_CHARS and then to the end of that line
	 *  (so a block boundary is also a line boundary); a line longer than 4 blocks is cut. */
	place(cls, text) {
		while (text) {
			let block = this.blocks[this.blocks.length - 1];
			if (!block || (block.chars >= BLOCK_CHARS && block.endsLine) || block.chars >= 4 * BLOCK_CHARS) {
				block = this.newBlock();
			}
			const room = Math.max(0, BLOCK_CHARS - block.chars);
			let end = text.length;
			if (end > room) {
				const nl = text.indexOf('\n', room);
				if (nl >= 0) end = nl + 1;
			}
			end = Math.min(end, 4 * BLOCK_CHARS - block.chars);
			const piece = text.slice(0, end);
			this.put(block, cls, piece);
			block.endsLine = piece.endsWith('\n');
			text = text.slice(end);
		}
	}

	newBlock() {
		const el = document.createElement('div');
		el.className = 'out-block';
		this.pre.appendChild(el);
		const block = { el, chars: 0, endsLine: false };
		this.blocks.push(block);
		return block;
	}

	/** Appends text to the block's last run if it has the same class, else as a new run. */
	put(block, cls, text) {
		const last = block.el.lastElementChild;
		if (last && last.className === cls) last.firstChild.appendData(text);
		else {
			const span = document.createElement('span');
			span.className = cls;
			span.textContent = text;
			block.el.appendChild(span);
		}
		block.chars += text.length;
		this.chars += text.length;
	}

	dropFirstBlock() {
		const { el, chars } = this.blocks.shift();
		el.remove();
		this.chars -= chars;
		this.dropped += chars;
		if (!this.marker) {
			this.marker = document.createElement('div');
			this.marker.className = 'out-note out-trimmed';
			this.pre.prepend(this.marker);
		}
		this.marker.textContent = `[${this.dropped} earlier characters not shown]`;
		this.marker.dataset.dropped = String(this.dropped);
	}

	/** Flushes on the next frame. */
	scrollSoon() {
		if (this.scrollQueued) return;
		this.scrollQueued = true;
		requestAnimationFrame(() => {
			this.scrollQueued = false;
			this.flush();
		});
	}

	note(text) { this.appendText('note', text, 'out-note'); }

	/** Output the sandbox's retention bound dropped before it could be sent. */
	lost(bytes) {
		this.lostBytes = (this.lostBytes || 0) + bytes;
		this.pre.dataset.lostBytes = String(this.lostBytes);
		this.note(`[${bytes} bytes of output were lost: the program wrote faster than they could be sent]\n`);
	}

	/** {exit_code, signal} from the stream's exit message. */
	exited({ exit_code, signal }) {
		for (const s of ['stdout', 'stderr']) this.appendText(s, this.decoders[s].decode()); // a cut-off character
		this.flush(); // the output is on the page before the exit code is
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
