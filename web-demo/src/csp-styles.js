// xterm.js (in its terminal element) and CodeMirror (in document.head) style
// themselves with <style> elements made at run time. A server policy of
// style-src 'self' (libwebsockets' security headers) refuses such inline
// styles, so this copies the text of every <style> under `root` into a
// constructed stylesheet (document.adoptedStyleSheets), which that policy
// does not govern, and keeps the copies current as the libraries rewrite them.
// Where inline styles are allowed (the page's own policy) a copy is a
// harmless duplicate.

export function mirrorInlineStyles(root) {
	if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in document)) return () => {};
	const copies = new Map(); // <style> element -> { sheet, text }
	let adopted = [];         // the sheets this root added, so a re-sync replaces only those
	const sync = () => {
		let changed = false;
		for (const el of root.querySelectorAll('style')) {
			let copy = copies.get(el);
			if (!copy) {
				copy = { sheet: new CSSStyleSheet(), text: null };
				copies.set(el, copy);
				changed = true;
			}
			if (copy.text !== el.textContent) {
				copy.text = el.textContent;
				copy.sheet.replaceSync(copy.text);
			}
		}
		for (const el of copies.keys()) {
			if (!root.contains(el)) { copies.delete(el); changed = true; }
		}
		if (changed) {
			const next = [...copies.values()].map((c) => c.sheet);
			document.adoptedStyleSheets = [...document.adoptedStyleSheets.filter((s) => !adopted.includes(s)), ...next];
			adopted = next;
		}
	};
	const observer = new MutationObserver(sync);
	observer.observe(root, { childList: true, subtree: true, characterData: true });
	sync();
	return () => observer.disconnect();
}
