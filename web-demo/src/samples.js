// What the editor starts with, per language: a program that prints to
// stdout and stderr over a few seconds (so live streaming is visible), and a
// small web app on port 3000 for the preview pane. The app prints a line with
// "listening" once its socket is bound: the preview reloads on that line.

export const LANGUAGES = {
	python: {
		label: 'Python',
		files: { program: 'main.py', app: 'app.py' },
		command: (file) => ({ cmd: 'python3', args: ['-u', file] }),
	},
	node: {
		label: 'Node',
		files: { program: 'main.mjs', app: 'app.mjs' }, // .mjs: ES modules (top-level await) on any Node the images carry
		command: (file) => ({ cmd: 'node', args: [file] }),
	},
};

export const APP_PORT = 3000;

const pythonProgram = `import sys, time

for i in range(1, 6):
    print(f"line {i} of 5")
    time.sleep(0.4)
print("a warning, on stderr", file=sys.stderr)
print("done")
sys.exit(3)
`;

const pythonApp = `from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import datetime

class Page(BaseHTTPRequestHandler):
    def do_GET(self):
        now = datetime.datetime.now().strftime("%H:%M:%S")
        body = f"""<!doctype html><title>sample app</title>
<h1>Hello from the sandbox</h1>
<p>Python answered {self.path} at {now}.</p>""".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = ThreadingHTTPServer(("0.0.0.0", 3000), Page)
print("listening on port 3000", flush=True)
server.serve_forever()
`;

const nodeProgram = `for (let i = 1; i <= 5; i++) {
  console.log(\`line \${i} of 5\`);
  await new Promise((r) => setTimeout(r, 400));
}
console.error('a warning, on stderr');
console.log('done');
process.exitCode = 3;
`;

const nodeApp = `import http from 'node:http';

http.createServer((req, res) => {
  const now = new Date().toTimeString().slice(0, 8);
  res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
  res.end(\`<!doctype html><title>sample app</title>
<h1>Hello from the sandbox</h1>
<p>Node answered \${req.url} at \${now}.</p>\`);
}).listen(3000, '0.0.0.0', () => console.log('listening on port 3000'));
`;

export const SAMPLES = {
	python: { program: pythonProgram, app: pythonApp },
	node: { program: nodeProgram, app: nodeApp },
};
