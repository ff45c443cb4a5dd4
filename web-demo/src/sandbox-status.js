// The header's sandbox line: id, status and time left (counted down every
// second, re-read from the gateway every 5 s so a timeout or an outside stop
// shows), and the extend and stop buttons.

function formatLeft(ms) {
	const s = Math.ceil(ms / 1000);
	return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
}

export class SandboxStatus {
	constructor({ id, status, isolation, image, timeLeft, extendButton, stopButton }, { onError, onStopped }) {
		Object.assign(this, { idEl: id, statusEl: status, isolationEl: isolation, imageEl: image, leftEl: timeLeft, extendButton, stopButton, onError, onStopped });
		this.sandbox = null;
		extendButton.addEventListener('click', () => this.guard(async () => {
			await this.sandbox.extendTimeout(5 * 60 * 1000);
			this.render();
		}));
		stopButton.addEventListener('click', () => this.guard(async () => {
			stopButton.disabled = true;
			await this.sandbox.stop();
			this.render();
		}));
		setInterval(() => this.render(), 1000);
		setInterval(() => this.poll(), 5000);
	}

	async guard(fn) {
		try { await fn(); } catch (e) { this.onError(e); }
	}

	track(sandbox) {
		this.sandbox = sandbox;
		this.announcedStop = false;
		this.render();
	}

	async poll() {
		if (!this.sandbox || this.sandbox.status === 'stopped' || this.sandbox.status === 'failed') return;
		try { await this.sandbox.refresh(); } catch { /* keep showing the last known state */ }
		this.render();
	}

	render() {
		const s = this.sandbox;
		const live = !!s && (s.status === 'running' || s.status === 'starting');
		this.idEl.textContent = s ? s.id : 'none';
		this.statusEl.textContent = s ? s.status + (s.info.stop_reason ? ` (${s.info.stop_reason})` : '') : '-';
		this.statusEl.dataset.status = s ? s.status : '';
		if (this.isolationEl) this.isolationEl.textContent = (s && s.isolation) || '-';
		if (this.imageEl) this.imageEl.textContent = (s && s.image) || '-';
		this.leftEl.textContent = live ? formatLeft(s.timeLeft()) : '-';
		this.extendButton.disabled = !live;
		this.stopButton.disabled = !live;
		if (s && !live && !this.announcedStop) {
			this.announcedStop = true;
			this.onStopped(s);
		}
	}
}
