// A typed use of @sandbox-service/client, checked by `tsc --noEmit --strict`
// in a scratch project that installed the packed tarball (tests/client/package.sh).
// Every public type is used; each `@ts-expect-error` line is a misuse the
// declarations must refuse (tsc fails on one that compiles, so declarations
// that degrade to `any` fail the check).
import {
	Sandbox, SandboxClient, Command, CommandStream, PtySession, RenderWatermark,
	createSandbox, vercelSandboxOptions, Snapshot,
	SandboxError, InvalidError, UnauthorizedError, NotFoundError, ConflictError,
	RateLimitedError, CapacityError, UnavailableError,
} from '@sandbox-service/client';
import type {
	SandboxClientOptions, CreateSandboxFields, CreateSandboxOptions, SandboxInfo, SandboxStatus, Route,
	NetworkPolicy, Capabilities, IsolationCapability, RequestOptions, FileToWrite, RunCommandOptions,
	CommandResult, CommandInfo, LogsOptions, StreamEvent, OutputEvent, TruncatedEvent, ExitEvent,
	StreamScope, PtyOptions, PtyEvents, RenderWatermarkOptions, VercelSandboxOptions,
	WebSocketLike, WebSocketConstructor,
	ImageInfo, ImageImportResult, PullImageOptions, SnapshotInfo, SnapshotOptions, ForkResult, ForkOptions,
	ListOptions, SandboxPage, EgressLogEntry, NetworkLogOptions,
} from '@sandbox-service/client';

// this turn's operations: snapshots, fork, pause, images, network, the paged list
export async function operations(client: SandboxClient, sbx: Sandbox, tar: Blob): Promise<number> {
	const snapOptions: SnapshotOptions = { expires_in_ms: 60000, keep_last: 2 };
	const snap: Snapshot = await sbx.snapshot(snapOptions);
	const snapInfo: SnapshotInfo = snap.info;
	const parent: string | null = snapInfo.parent;
	const fromSnap: Sandbox = await snap.createSandbox({ timeout_ms: 60000 });
	const again: Sandbox = await client.createFromSnapshot(snap.id, { source: { snapshot: snap.id } });
	const all: Snapshot[] = await client.snapshots();
	const one: Snapshot = await client.getSnapshot(snap.id);
	const gone: Snapshot = await client.deleteSnapshot(one.id);
	await snap.delete();
	const forkOptions: ForkOptions = { count: 2 };
	const fork: ForkResult = await sbx.fork(forkOptions);
	const forked: Sandbox[] = fork.sandboxes;
	await (await sbx.pause()).resume();
	const paused: SandboxStatus = 'paused';
	const listOptions: ListOptions = { limit: 10, cursor: null };
	const page: SandboxPage = await client.listPage(listOptions);
	const next: string | null = page.next_cursor;
	let n = 0;
	for await (const s of client.iterSandboxes({ limit: 2 })) { const x: Sandbox = s; n += x.id.length; }
	const images: ImageInfo[] = (await client.images()).images;
	const imported: ImageImportResult = await client.importImage('app', tar);
	const pullOptions: PullImageOptions = { name: 'app2' };
	const pulled: ImageImportResult = await client.pullImage('127.0.0.1:5000/app:1', pullOptions);
	await client.deleteImage(imported.name);
	const policy: NetworkPolicy = { allow: ['example.com'], deny_cidrs: ['10.0.0.0/8'] };
	await sbx.setNetwork(policy);
	const inForce: NetworkPolicy = sbx.network;
	const logOptions: NetworkLogOptions = { since: 0 };
	for await (const e of sbx.networkLog(logOptions)) { const entry: EgressLogEntry = e; n += entry.seq; }

	// @ts-expect-error count is a number
	await sbx.fork({ count: '2' });
	// @ts-expect-error a verdict is allowed or denied
	const badEntry: EgressLogEntry['verdict'] = 'maybe';
	// @ts-expect-error an import takes the archive's bytes, not a path
	await client.importImage('app', '/tmp/app.tar');
	// @ts-expect-error a network policy is not a number
	await sbx.setNetwork(3);
	return [parent, fromSnap.id, again.id, all.length, gone.id, forked.length, paused, next, images.length,
		pulled.layers, inForce, badEntry].length + n;
}

export async function example(ws: WebSocketConstructor): Promise<string> {
	const options: SandboxClientOptions = { baseUrl: 'http://localhost:8080', apiKey: 'k', WebSocket: ws, streamTokens: true };
	const client = new SandboxClient(options);
	const network: NetworkPolicy = { allow: ['example.com'] };
	const fields: CreateSandboxFields = { timeout_ms: 60000, ports: [3000], env: { A: 'b' }, network };
	const sbx: Sandbox = await client.create(fields);
	const info: SandboxInfo = sbx.info;
	const status: SandboxStatus = sbx.status;
	const routes: Route[] = info.routes ?? [];
	const url: string = sbx.domain(3000);

	const caps: Capabilities = await client.capabilities();
	const first: IsolationCapability | undefined = caps.isolation[0];
	const created: Sandbox = await createSandbox({ apiKey: 'k', isolation: first?.name } satisfies CreateSandboxOptions);
	const again: Sandbox = await Sandbox.create({ timeout_ms: 1000 });

	const files: FileToWrite[] = [{ path: 'a.txt', content: 'x', mode: 0o644 }, { path: 'b.bin', content: new Uint8Array([1]) }];
	await sbx.writeFiles(files);
	const bytes: Uint8Array = await sbx.readFile('b.bin');
	const text: string = await sbx.readTextFile('a.txt');

	const run = { cmd: 'python3', args: ['-c', 'print(1)'] } satisfies RunCommandOptions;
	const result: CommandResult = await sbx.runCommand(run);
	const out: string = result.stdout;
	const code: number | null = result.exit_code;
	const cmd: Command = await sbx.runCommand({ cmd: 'sleep', args: ['1'], detached: true });
	const logsOptions: LogsOptions = { since: 0, input: true };
	const stream: CommandStream = cmd.logs(logsOptions);
	stream.write('stdin');
	stream.end();
	for await (const ev of stream) {
		const e: StreamEvent = ev;
		if (e.type === 'stdout' || e.type === 'stderr') { const o: OutputEvent = e; o.data.byteLength; }
		else if (e.type === 'truncated') { const t: TruncatedEvent = e; t.bytes.toFixed(); }
		else { const x: ExitEvent = e; x.exit_code; }
	}
	const done: CommandInfo = await cmd.wait();
	const scopes: StreamScope[] = ['read', 'write'];
	const token: string = await sbx.streamToken(scopes);

	const ptyOptions: PtyOptions = { cmd: 'bash', cols: 80, rows: 24 };
	const term: PtySession = sbx.pty(ptyOptions);
	const off = term.on('data', (b: PtyEvents['data']) => b.byteLength);
	term.on('exit', (e: PtyEvents['exit']) => e.exit_code);
	off();
	await term.opened;
	term.resize(100, 30);
	await term.close();

	const wmOptions: RenderWatermarkOptions = { high: 100, low: 10, onPause: () => term.pause() };
	new RenderWatermark(wmOptions).written(5);
	const vercel: VercelSandboxOptions = vercelSandboxOptions({ url: 'http://localhost:8080', apiKey: 'k' });
	const req: RequestOptions = { json: { a: 1 } };
	const res: Response = await client.request('POST', '/v1/x', { ...req, raw: true });
	const socket: WebSocketLike = new ws(client.socketUrl('/v1/x'));
	socket.close(1000);

	try {
		await client.get('sbx_x');
	} catch (e) {
		if (e instanceof NotFoundError || e instanceof InvalidError || e instanceof UnauthorizedError
			|| e instanceof ConflictError || e instanceof RateLimitedError || e instanceof CapacityError
			|| e instanceof UnavailableError) {
			const s: number = e.status;
			const c: string = e.code;
			return `${s} ${c} ${e.message}`;
		}
		if (e instanceof SandboxError) return e.code;
	}
	await sbx.extendTimeout(1000);
	await sbx.stop();

	// misuses the declarations refuse
	// @ts-expect-error cmd is required
	await sbx.runCommand({ args: ['x'] });
	// @ts-expect-error a detached run gives a Command, not a result
	const wrong: CommandResult = await sbx.runCommand({ cmd: 'x', detached: true });
	// @ts-expect-error status is a number
	const notText: string = new SandboxError(404, 'not_found', 'm').status;
	// @ts-expect-error no such event
	term.on('nosuch', () => {});
	// @ts-expect-error a port is a number
	sbx.domain('3000');
	// @ts-expect-error stream events have no 'stdin' type
	const bad: StreamEvent = { type: 'stdin', data: new Uint8Array(), offset: 0 };

	return [routes.length, url, created.id, again.id, bytes.length, text, out, code, done.status, token,
		vercel.teamId, res.status, status, wrong, notText, bad].join(' ');
}
