// The network policy box and the egress log beside the output: the policy
// a new sandbox is created with, applied to the running one by Apply (PATCH
// .../network), and the decisions of its resolver and egress proxy, polled
// while the sandbox runs (GET .../network/log?since=N). The policy is
// JSON ("deny-all", "allow-all" or {"allow":[...]}) or names separated by
// commas.

const POLL_MS = 1500;
const MAX_ROWS = 200;

export class NetworkPane {
	constructor({ input, applyButton, log, onError, onInvalid, onApplied }) {
		Object.assign(this, { input, applyButton, log, onError, onInvalid, onApplied });
		this.sandbox = null;
		this.since = 0;
		this.timer = null;
		applyButton.addEventListener('click', () => this.apply());
	}

	/** The box's policy as the API takes it; throws a clear error for what is neither. */
	policy() {
		const text = this.input.value.trim();
		if (!text) return { allow: [] };
		if (text === 'deny-all' || text === 'allow-all') return text;
		if (/^[\[{"]/.test(text)) {
			try { return JSON.parse(text); } catch (e) { throw new Error(`network policy: ${e.message}`); }
		}
		return { allow: text.split(',').map((s) => s.trim()).filter(Boolean) };
	}

	/** What a create sends. */
	fields() {
		return { network: this.policy() };
	}

	track(sandbox) {
		this.stop();
		this.sandbox = sandbox;
		this.since = 0;
		this.log.replaceChildren();
		this.applyButton.disabled = false;
		this.poll();
	}

	stop() {
		clearTimeout(this.timer);
		this.timer = null;
		this.sandbox = null;
		this.applyButton.disabled = true;
	}

	async apply() {
		if (!this.sandbox) return;
		let policy;
		// a typing mistake is the user's to fix, not a script error
		try { policy = this.policy(); } catch (e) { return this.onInvalid(e.message); }
		try {
			const now = (await this.sandbox.setNetwork(policy)).network;
			this.input.value = typeof now === 'string' ? now : JSON.stringify(now);
			this.onApplied(now);
		} catch (e) { this.onError(e); }
	}

	async poll() {
		const sandbox = this.sandbox;
		if (!sandbox) return;
		try {
			for await (const e of sandbox.networkLog({ since: this.since })) {
				if (sandbox !== this.sandbox) return;
				this.add(e);
			}
		} catch { /* a stopped sandbox: the next track() starts again */ }
		if (sandbox === this.sandbox) this.timer = setTimeout(() => this.poll(), POLL_MS);
	}

	add(e) {
		this.since = Math.max(this.since, e.seq);
		const li = document.createElement('li');
		li.className = `egress-${e.verdict}`;
		li.dataset.seq = String(e.seq);
		// textContent only: names and reasons come from the sandbox's traffic
		li.textContent = `${e.verdict === 'allowed' ? '✓' : '✗'} ${e.name || '(no name)'}:${e.port} ${e.rule}` +
			(e.bytes_out || e.bytes_in ? ` ↑${e.bytes_out} ↓${e.bytes_in}` : '');
		this.log.append(li);
		while (this.log.childElementCount > MAX_ROWS) this.log.firstElementChild.remove();
		this.log.scrollTop = this.log.scrollHeight;
	}
}
