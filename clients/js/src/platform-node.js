// What the client takes from Node when the caller does not say (chosen by
// the "#platform" import of package.json under the "node" condition):
// the gateway and key from SANDBOX_URL and SANDBOX_API_KEY, and the `ws`
// package as WebSocket. Node 20 has no WebSocket of its own; `ws` is used on
// later Node versions too, so one implementation is the one tested.
import WebSocket from 'ws';

export function environmentDefaults() {
	const env = process.env;
	return { baseUrl: env.SANDBOX_URL || undefined, apiKey: env.SANDBOX_API_KEY || undefined };
}

export function defaultWebSocket() {
	return WebSocket;
}

/** The message for an option neither given nor in the environment. */
export function missing(option, variable) {
	return `${option} is required: pass { ${option} } or set ${variable}`;
}
