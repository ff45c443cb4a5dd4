// The create form's isolation choice: a <select> of the isolations the
// gateway offers (GET /v1/capabilities), shown only when more than one is
// available; with one there is nothing to choose and the gateway's default
// applies.

export class IsolationChoice {
	constructor(select, label) {
		Object.assign(this, { select, label });
	}

	/** Fills the choice from the gateway's capabilities, keeping what was chosen while it is
	 *  still offered. A gateway without the route (older) or an error: hidden, the default applies. */
	async load(client) {
		let caps = null;
		try { caps = await client.capabilities(); } catch { /* hidden below */ }
		const offered = caps && Array.isArray(caps.isolation) ? caps.isolation.filter((d) => d.available) : [];
		const before = this.select.value;
		this.select.replaceChildren(...offered.map((d) => {
			const o = document.createElement('option');
			o.value = d.name;
			o.textContent = d.name + (d.name === caps.default ? ' (default)' : '');
			return o;
		}));
		const names = offered.map((d) => d.name);
		if (names.includes(before)) this.select.value = before;
		else if (caps && names.includes(caps.default)) this.select.value = caps.default;
		this.select.hidden = this.label.hidden = offered.length < 2;
	}

	/** What a create sends: the chosen isolation while the choice is shown, else nothing. */
	fields() {
		return this.select.hidden || !this.select.value ? {} : { isolation: this.select.value };
	}
}
