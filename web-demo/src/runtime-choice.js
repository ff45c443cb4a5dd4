// The runtime choice beside the language: a <select> of the images a
// sandbox can start from (GET /v1/images), each named with the Node and
// Python it carries as the gateway read them from the image. A new choice
// takes a new sandbox (an image is fixed for a sandbox's life): main.js
// starts one.

function label(img) {
	const r = img.runtimes || {};
	const has = [r.node && `Node ${r.node}`, r.python && `Python ${r.python}`].filter(Boolean);
	return has.length ? `${img.name} (${has.join(', ')})` : img.name;
}

export class RuntimeChoice {
	constructor(select, label_) {
		Object.assign(this, { select, label: label_ });
	}

	/** Fills the choice from the gateway's images, keeping what was chosen while it is still
	 *  there, else the default image. None listed (an older gateway, an error): hidden, the
	 *  gateway's default applies. */
	async load(client) {
		let images = [];
		try { images = (await client.images()).images || []; } catch { /* hidden below */ }
		const before = this.select.value;
		this.select.replaceChildren(...images.map((img) => {
			const o = document.createElement('option');
			o.value = img.name;
			o.textContent = label(img);
			return o;
		}));
		const names = images.map((i) => i.name);
		if (names.includes(before)) this.select.value = before;
		else if (names.includes('default')) this.select.value = 'default';
		this.select.hidden = this.label.hidden = images.length === 0;
	}

	/** Shows name as chosen (a sandbox found again after a reload started from it). */
	show(name) {
		if ([...this.select.options].some((o) => o.value === name)) this.select.value = name;
	}

	/** What a create sends: the chosen image while the choice is shown, else nothing. */
	fields() {
		return this.select.hidden || !this.select.value ? {} : { image: this.select.value };
	}
}
