// Where the page gets its API key: `#key=...` in the URL (what a link
// printed by `make run` can carry), else what was typed last time
// (localStorage). The fragment is removed from the address bar once read so
// the key does not linger in history or screenshots.

const STORAGE_KEY = 'sandbox-demo.apiKey';

export function initialApiKey() {
	const m = /(?:^#|&)key=([^&]*)/.exec(location.hash);
	if (m) {
		const key = decodeURIComponent(m[1]);
		rememberApiKey(key);
		history.replaceState(null, '', location.pathname + location.search);
		return key;
	}
	try { return localStorage.getItem(STORAGE_KEY) || ''; } catch { return ''; }
}

export function rememberApiKey(key) {
	try { localStorage.setItem(STORAGE_KEY, key); } catch { /* storage disabled: key lives for this page only */ }
}
