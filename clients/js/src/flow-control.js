// Terminal flow control, browser side. xterm.js renders only some MB/s, so
// a program like `yes` can produce output far faster than the tab can draw
// it. The terminal counts bytes handed to term.write() that its callback has
// not yet reported rendered; above `high` it asks the gateway to pause
// (the gateway then stops reading the PTY, so the program blocks on its
// write and Ctrl-C still gets through at once), below `low` to resume.
// The gap between the two marks keeps it from flapping on every chunk.

export const PAUSE_ABOVE = 256 * 1024;
export const RESUME_BELOW = 64 * 1024;

export class RenderWatermark {
	constructor({ high = PAUSE_ABOVE, low = RESUME_BELOW, onPause = () => {}, onResume = () => {} } = {}) {
		if (!(low < high)) throw new RangeError('low watermark must be below high');
		this.high = high;
		this.low = low;
		this.onPause = onPause;
		this.onResume = onResume;
		this.pending = 0;     // written but not yet rendered
		this.paused = false;
	}

	/** n bytes were handed to the renderer. */
	written(n) {
		this.pending += n;
		if (!this.paused && this.pending > this.high) {
			this.paused = true;
			this.onPause();
		}
	}

	/** n bytes handed over earlier have been rendered. */
	rendered(n) {
		this.pending = Math.max(0, this.pending - n);
		if (this.paused && this.pending < this.low) {
			this.paused = false;
			this.onResume();
		}
	}
}
