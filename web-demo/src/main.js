// The playground page: wires the API key, the sandbox, the editor, Run/Stop
// with live output, the terminal and the preview together. Every element it
// uses is in index.html; everything it does goes through the client (clients/js).
import './style.css';
import { SandboxClient } from '../../clients/js/src/client.js';
import { initialApiKey, rememberApiKey } from './api-key.js';
import { CodeEditor } from './editor.js';
import { RunOutput } from './run-output.js';
import { TerminalPane } from './terminal-pane.js';
import { PreviewPane } from './preview-pane.js';
import { SandboxStatus } from './sandbox-status.js';
import { IsolationChoice } from './isolation-choice.js';
import { RuntimeChoice } from './runtime-choice.js';
import { NetworkPane } from './network-pane.js';
import { SnapshotChoice } from './snapshot-choice.js';
import { LANGUAGES, SAMPLES, APP_PORT } from './samples.js';
import { mirrorInlineStyles } from './csp-styles.js';

const $ = (id) => document.getElementById(id);
const SANDBOX_ID_KEY = 'sandbox-demo.sandboxId'; // per tab: a reload keeps its sandbox

const ui = {
	language: 'python',
	file: 'program',
	sandbox: null,
	run: null, // { sandbox, cmd, stream, isApp, done }
};

mirrorInlineStyles(document.head); // CodeMirror's theme, should the server forbid inline styles
const editor = new CodeEditor($('editor'), (language, file) => SAMPLES[language][file]);
const output = new RunOutput($('output'), $('exit-status'));
const terminal = new TerminalPane($('terminal'));
const preview = new PreviewPane({ iframe: $('preview'), link: $('preview-url'), reloadButton: $('reload-preview') });
const isolation = new IsolationChoice($('isolation'), $('isolation-label'));
const runtime = new RuntimeChoice($('runtime'), $('runtime-label'));
const network = new NetworkPane({
	input: $('network-policy'), applyButton: $('apply-network'), log: $('egress-log'),
	onError: (e) => showError(e),
	onInvalid: (text) => showMessage(text, 'error'),
	onApplied: () => showMessage('network policy applied to new connections'),
});
const snapshots = new SnapshotChoice($('from-snapshot'), $('from-snapshot-label'));
const status = new SandboxStatus(
	{ id: $('sandbox-id'), status: $('sandbox-status'), isolation: $('sandbox-isolation'), image: $('sandbox-image'), timeLeft: $('sandbox-time-left'), extendButton: $('extend'), stopButton: $('stop-sandbox') },
	{ onError: showError, onStopped: sandboxEnded },
);

function showMessage(text, kind = 'info') {
	$('message').textContent = text;
	$('message').dataset.kind = kind;
}

function showError(e) {
	console.error(e);
	// an API refusal shows its code (e.g. unknown_isolation) before the gateway's message
	showMessage(e.code ? `${e.code}: ${e.message}` : e.message || String(e), 'error');
}

function sandboxLive() {
	return !!ui.sandbox && ui.sandbox.status === 'running';
}

function updateButtons() {
	$('run').disabled = !sandboxLive();
	$('start-app').disabled = !sandboxLive();
	$('snapshot').disabled = !sandboxLive();
	$('stop-run').disabled = !ui.run;
	$('connect').textContent = ui.sandbox ? 'New sandbox' : 'Start sandbox';
}

function showFile(language, file) {
	ui.language = language;
	ui.file = file;
	editor.show(language, file);
	for (const b of document.querySelectorAll('.file-tab')) {
		b.setAttribute('aria-selected', String(b.dataset.file === file));
		b.textContent = b.dataset.file === 'app' ? `${LANGUAGES[language].files.app} (web app, port ${APP_PORT})` : LANGUAGES[language].files.program;
	}
}

function showSidePane(name) {
	for (const b of document.querySelectorAll('.side-tab')) b.setAttribute('aria-selected', String(b.dataset.pane === name));
	for (const p of document.querySelectorAll('.side-body')) p.hidden = p.dataset.pane !== name;
	if (name === 'terminal') terminal.refit();
}

/** Finds this tab's sandbox again after a reload, or creates one with port 3000 open for the preview. */
async function startSandbox() {
	const apiKey = $('api-key').value.trim();
	if (!apiKey) return showMessage('Enter the API key that `make run` printed.', 'error');
	rememberApiKey(apiKey);
	const client = new SandboxClient({ apiKey });
	showMessage('starting a sandbox...');
	await isolation.load(client);
	await runtime.load(client);
	await snapshots.load(client);
	let sandbox = null;
	const previousId = sessionStorage.getItem(SANDBOX_ID_KEY);
	if (previousId && !ui.sandbox) {
		try {
			sandbox = await client.get(previousId);
			if (sandbox.status !== 'running') sandbox = null;
		} catch { sandbox = null; }
	}
	if (!sandbox) {
		// the old one ends first: two at once count twice against the key's limit
		if (ui.sandbox && sandboxLive()) await ui.sandbox.stop().catch(() => {});
		sandbox = await client.create({ ports: [APP_PORT], timeout_ms: 10 * 60 * 1000, ...isolation.fields(), ...runtime.fields(),
			...snapshots.fields(), ...network.fields() });
	}
	sessionStorage.setItem(SANDBOX_ID_KEY, sandbox.id);
	runtime.show(sandbox.image);
	ui.sandbox = sandbox;
	ui.run = null;
	output.clear();
	output.setExit('', '');
	preview.clear();
	status.track(sandbox);
	network.track(sandbox);
	updateButtons();
	showMessage('');
	await terminal.connect(sandbox);
}

function sandboxEnded(sandbox) {
	if (sandbox !== ui.sandbox) return;
	network.stop();
	sessionStorage.removeItem(SANDBOX_ID_KEY);
	terminal.disconnect(true);
	updateButtons();
	showMessage(`Sandbox ${sandbox.id} has ${sandbox.status === 'failed' ? 'failed' : 'stopped'}. Start a new one to go on.`);
}

/** Kills the current run and waits (up to a few seconds) for its exit to arrive. */
async function stopRun() {
	const run = ui.run;
	if (!run) return;
	const ended = (ms) => Promise.race([run.done, new Promise((r) => setTimeout(() => r('timeout'), ms))]);
	await run.sandbox.kill(run.cmd.id, 'SIGTERM').catch(() => {});
	if ((await ended(3000)) === 'timeout') {
		await run.sandbox.kill(run.cmd.id, 'SIGKILL').catch(() => {});
		await ended(3000);
	}
}

/** Writes the file to the sandbox, runs it detached and streams its output (fileKind: 'program' | 'app'). */
async function runFile(fileKind) {
	const sandbox = ui.sandbox;
	await stopRun();
	const lang = LANGUAGES[ui.language];
	const file = lang.files[fileKind];
	await sandbox.writeFiles([{ path: file, content: editor.textOf(ui.language, fileKind) }]);
	output.clear();
	const cmd = await sandbox.runCommand({ ...lang.command(file), detached: true });
	const run = { sandbox, cmd, stream: sandbox.logs(cmd.id), isApp: fileKind === 'app' };
	ui.run = run;
	updateButtons();
	if (run.isApp) {
		showSidePane('preview');
		preview.show(sandbox.domain(APP_PORT)); // the gateway's 502 page until the app listens
	}
	run.done = (async () => {
		let heard = '';
		for await (const ev of run.stream) {
			if (ev.type === 'stdout' || ev.type === 'stderr') {
				output.append(ev.type, ev.data);
				if (run.isApp && heard !== null) {
					heard = (heard + new TextDecoder().decode(ev.data)).slice(-200);
					if (/listening/i.test(heard)) { heard = null; preview.reload(); }
				}
			} else if (ev.type === 'truncated') {
				output.lost(ev.bytes);
			} else if (ev.type === 'exit') {
				output.exited(ev);
			}
		}
	})().catch((e) => output.note(`\n[output stream failed: ${e.message}]\n`)).finally(() => {
		if (ui.run === run) ui.run = null;
		updateButtons();
	});
}

function guarded(fn) {
	return (...args) => fn(...args).catch(showError);
}

$('key-form').addEventListener('submit', (e) => { e.preventDefault(); guarded(startSandbox)(); });
$('language').addEventListener('change', (e) => showFile(e.target.value, ui.file));
// the choice can show before the first start, once the key is typed
$('api-key').addEventListener('change', () => {
	const apiKey = $('api-key').value.trim();
	if (apiKey) isolation.load(new SandboxClient({ apiKey })).catch(() => {});
	if (apiKey) runtime.load(new SandboxClient({ apiKey })).catch(() => {});
});
// an image is fixed for a sandbox's life: another runtime is another sandbox
$('runtime').addEventListener('change', guarded(async () => { if (ui.sandbox) await startSandbox(); }));
for (const b of document.querySelectorAll('.file-tab')) b.addEventListener('click', () => showFile(ui.language, b.dataset.file));
for (const b of document.querySelectorAll('.side-tab')) b.addEventListener('click', () => showSidePane(b.dataset.pane));
$('run').addEventListener('click', guarded(() => runFile(ui.file)));
// a snapshot of the current sandbox's files, then chosen for "New sandbox"
$('snapshot').addEventListener('click', guarded(async () => {
	$('snapshot').disabled = true;
	try {
		const snap = await snapshots.take(ui.sandbox.client, ui.sandbox);
		showMessage(`Snapshot ${snap.id} taken: "New sandbox" starts from it.`);
	} finally { updateButtons(); }
}));
$('stop-run').addEventListener('click', guarded(stopRun));
$('start-app').addEventListener('click', guarded(async () => {
	showFile(ui.language, 'app');
	await runFile('app');
}));

showFile(ui.language, ui.file);
showSidePane('terminal');
updateButtons();
$('api-key').value = initialApiKey();
if ($('api-key').value) guarded(startSandbox)();
