// xterm.js sizes and colours its rows with <style> elements it creates at
// run time. The gateway's Content-Security-Policy (style-src 'self') blocks
// such inline styles, so this copies the text of every <style> under `root`
// into a constructed stylesheet (document.adoptedStyleSheets), which the
// policy does not govern, and keeps the copy current as xterm rewrites it.
// Where inline styles are allowed the copy is a harmless duplicate.

const mirrored = new WeakSet(); // every sheet made here, so a re-sync replaces only ours

export function mirrorInlineStyles(root) {
	if (typeof CSSStyleSheet === 'undefined' || !('adoptedStyleSheets' in document)) return () => {};
	const copies = new Map(); // <style> element -> { sheet, text }
	const sync = () => {
		let changed = false;
		for (const el of root.querySelectorAll('style')) {
			let copy = copies.get(el);
			if (!copy) {
				copy = { sheet: new CSSStyleSheet(), text: null };
				mirrored.add(copy.sheet);
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
			const foreign = document.adoptedStyleSheets.filter((s) => !mirrored.has(s));
			document.adoptedStyleSheets = [...foreign, ...[...copies.values()].map((c) => c.sheet)];
		}
	};
	const observer = new MutationObserver(sync);
	observer.observe(root, { childList: true, subtree: true, characterData: true });
	sync();
	return () => observer.disconnect();
}
