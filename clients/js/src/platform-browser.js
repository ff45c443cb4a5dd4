// What the client takes from a browser (or any runtime without the "node"
// condition) when the caller does not say: the page's own origin as the
// gateway and the global WebSocket. Nothing here imports a Node module, so a
// bundle for the browser carries none.

export function environmentDefaults() {
	return { baseUrl: globalThis.location ? globalThis.location.origin : undefined, apiKey: undefined };
}

export function defaultWebSocket() {
	return globalThis.WebSocket;
}

/** The message for an option not given. */
export function missing(option) {
	return `${option} is required`;
}
