// Options for the @vercel/sandbox SDK that point it at this gateway:
//
//   import { Sandbox } from '@vercel/sandbox';
//   const sandbox = await Sandbox.create({ ...vercelSandboxOptions({ url, apiKey }), timeout: 60_000 });
//
// The SDK sends every call to https://vercel.com/api + path through the
// fetch it is given, with Authorization: Bearer <token>; this fetch sends
// it to the gateway instead (url + path), and the token is the API key.
// teamId and projectId are required by the SDK and ignored by the gateway.
export function vercelSandboxOptions({ url, apiKey, fetch: baseFetch } = {}) {
	if (!url) throw new TypeError('url (the gateway, e.g. https://sandbox.example.com) is required');
	if (!apiKey) throw new TypeError('apiKey is required');
	const base = String(url).replace(/\/+$/, '');
	const send = baseFetch || globalThis.fetch.bind(globalThis);
	const vercelApi = 'https://vercel.com/api/';
	return {
		token: apiKey,
		teamId: 'self-hosted',
		projectId: 'self-hosted',
		fetch(input, init) {
			const href = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
			if (!href.startsWith(vercelApi)) return send(input, init);
			return send(base + '/' + href.slice(vercelApi.length), init);
		},
	};
}
