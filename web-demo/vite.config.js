// Builds the playground into web-demo/dist, which the gateway serves at /.
// `npx vite --config web-demo/vite.config.js` serves it for development and
// forwards the API (WebSockets included) to a gateway at $GATEWAY.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const gateway = process.env.GATEWAY || 'http://127.0.0.1:8080';

export default defineConfig({
	root: fileURLToPath(new URL('.', import.meta.url)),
	base: './',
	logLevel: 'warn',
	build: {
		outDir: 'dist',
		emptyOutDir: true,
		// CodeMirror and xterm.js make one ~600 KB bundle; splitting it gains nothing here.
		chunkSizeWarningLimit: 1500,
	},
	server: { proxy: { '/v1': { target: gateway, ws: true }, '/healthz': gateway } },
});
