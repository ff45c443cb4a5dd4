// Snapshots in the playground: the Snapshot button keeps the current
// sandbox's files (POST .../snapshots), and the "From" choice of the create
// form lists the key's snapshots (GET /v1/snapshots), newest first, so that
// "New sandbox" starts from one. The choice is hidden while there is none.

// a client Snapshot: its id, and the gateway's object as info
function label(s) {
	const when = new Date(s.info.created_at).toLocaleTimeString();
	return `${s.id} (${when})`;
}

export class SnapshotChoice {
	constructor(select, labelEl) {
		Object.assign(this, { select, labelEl });
	}

	/** Fills the choice from the key's snapshots; keeps the chosen one while it exists. */
	async load(client) {
		let snaps = [];
		try { snaps = await client.snapshots(); } catch { /* hidden below: a fresh image applies */ }
		snaps.sort((a, b) => b.info.created_at - a.info.created_at);
		const before = this.select.value;
		const fresh = document.createElement('option');
		fresh.value = '';
		fresh.textContent = 'a fresh image';
		this.select.replaceChildren(fresh, ...snaps.map((s) => {
			const o = document.createElement('option');
			o.value = s.id;
			o.textContent = label(s);
			return o;
		}));
		this.select.value = snaps.some((s) => s.id === before) ? before : '';
		this.select.hidden = this.labelEl.hidden = snaps.length === 0;
	}

	/** Takes a snapshot of sandbox, lists it and makes it the choice; the snapshot. */
	async take(client, sandbox) {
		const snap = await sandbox.snapshot();
		await this.load(client);
		this.select.value = snap.id;
		return snap;
	}

	/** What a create sends: the chosen snapshot as its source, else nothing. */
	fields() {
		return this.select.hidden || !this.select.value ? {} : { source: { snapshot: this.select.value } };
	}
}
