// The Preview tab: an iframe on the sandbox's preview URL for port 3000.
// Pointed there as soon as the app starts, it shows the gateway's 502 page
// ("nothing listens") until the app prints that it listens; then it is
// reloaded and shows the app. Re-running the app reloads it again.

export class PreviewPane {
	constructor({ iframe, link, reloadButton }) {
		this.iframe = iframe;
		this.link = link;
		this.reloadButton = reloadButton;
		this.url = null;
		this.loads = 0;
		reloadButton.addEventListener('click', () => this.reload());
	}

	show(url) {
		this.url = url;
		this.link.href = url;
		this.link.textContent = url;
		this.reloadButton.disabled = false;
		this.reload();
	}

	reload() {
		if (!this.url) return;
		// Assigning src navigates again even when it is unchanged.
		this.loads++;
		this.iframe.dataset.loads = String(this.loads);
		this.iframe.src = this.url;
	}

	clear() {
		this.url = null;
		this.link.removeAttribute('href');
		this.link.textContent = '';
		this.reloadButton.disabled = true;
		this.iframe.removeAttribute('src');
	}
}
