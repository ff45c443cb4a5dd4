// The deployment files (deploy/k8s/*.yaml, deploy/nomad/*.hcl) read the way
// Kubernetes and Nomad would read them, short of running either (neither
// is on this machine): every YAML document parses and is a resource valid
// against its API's schema (kubernetes-models), every
// HCL file parses (HCL v2's parser) into the jobs docs/deploy.md says; each
// flag the files pass to sandbox-gateway / sandbox-runner is one its --help
// lists; the names that tie the pieces together agree (the DNS name the
// gateways resolve is the runners' Service, the port is its port, every
// mounted volume exists, the runner name mapping gives legal names).
//   node tests/deploy/deploy_files.mjs GATEWAY_HELP RUNNER_HELP
// (the two --help texts, as files: the shell ran the binaries). The systemd
// units' flags are checked too.
import { readFileSync, readdirSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { parseAllDocuments } from 'yaml';
import hcl from 'hcl2-parser';
import { result, finish } from '../lib/results.mjs';

const [gwHelpFile, rnHelpFile] = process.argv.slice(2);
const K8S = 'deploy/k8s', NOMAD = 'deploy/nomad';
const BINS = ['sandbox-gateway', 'sandbox-runner'];

// The flags a --help text names: every --word in it (the gateway lists one
// a line, the runner's usage brackets them).
const helpFlags = (file) => new Set(readFileSync(file, 'utf8').match(/--[a-z][a-z0-9-]*/g) ?? []);
const known = { 'sandbox-gateway': helpFlags(gwHelpFile), 'sandbox-runner': helpFlags(rnHelpFile) };
const runnerHelp = readFileSync(rnHelpFile, 'utf8');

// Invocations: { bin, flags[], where } from a command vector or a shell
// script. In a script, a command ends at a newline not escaped, ';', '|',
// '&&' or '||'; the words after a sandbox binary that start with "--" are
// its flags ("sandbox-runner ctl ..." is the runner's ctl).
function fromWords(words, where, out) {
  const at = words.findIndex((w) => BINS.includes(w.split('/').pop()));
  if (at < 0) return;
  const bin = words[at].split('/').pop();
  const ctl = bin === 'sandbox-runner' && words[at + 1] === 'ctl';
  out.push({ bin: ctl ? 'sandbox-runner ctl' : bin, sub: ctl ? words[at + 2] : null,
    flags: words.slice(at + 1).filter((w) => w.startsWith('--')), where });
}
function fromScript(script, where, out) {
  for (const cmd of script.replace(/\\\n/g, ' ').split(/\n|;|&&|\|\||\|/))
    fromWords(cmd.trim().split(/\s+/).map((w) => w.replace(/^["']|["']$/g, '')), where, out);
}
function fromVector(vec, where, out) {
  if (vec.length >= 3 && /(^|\/)(ba)?sh$/.test(vec[0]) && vec[1] === '-c') fromScript(vec.slice(2).join(' '), where, out);
  else fromWords(vec.map(String), where, out);
}

// -- Kubernetes
const invocations = [];
const docs = [];   // { file, doc }
const yamlFiles = readdirSync(K8S).filter((f) => /\.ya?ml$/.test(f)).sort();
result('k8s: the manifests are there', ['namespace.yaml', 'runner.yaml', 'gateway.yaml', 'ingress.yaml',
  'cert-manager.yaml', 'kustomization.yaml'].every((f) => yamlFiles.includes(f)), `found ${yamlFiles}`);
for (const f of yamlFiles) {
  const text = readFileSync(`${K8S}/${f}`, 'utf8');
  const parsed = parseAllDocuments(text);
  const errors = parsed.flatMap((d) => [...d.errors, ...d.warnings].map((e) => e.message));
  result(`yaml: ${f} parses`, errors.length === 0, errors.join('; '));
  const objs = parsed.map((d) => d.toJS()).filter((o) => o != null);
  const bad = objs.filter((o) => typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' ||
    (o.kind !== 'Kustomization' && typeof o.metadata?.name !== 'string'));
  result(`yaml: every document of ${f} is a resource (apiVersion, kind, metadata.name)`,
    objs.length > 0 && bad.length === 0, `${objs.length} documents, ${bad.length} without`);
  for (const o of objs) docs.push({ file: f, doc: o });
}

// Each resource against its API's OpenAPI schema (kubernetes-models, and
// cert-manager's CRDs): types, enums, required fields. Not unknown fields
// (the schemas allow them; the API server's strict field validation would
// refuse them) and not admission.
const models = {
  v1: await import('kubernetes-models/v1'),
  'apps/v1': await import('kubernetes-models/apps/v1'),
  'policy/v1': await import('kubernetes-models/policy/v1'),
  'networking.k8s.io/v1': await import('kubernetes-models/networking.k8s.io/v1'),
  'cert-manager.io/v1': await import('@kubernetes-models/cert-manager/cert-manager.io/v1'),
};
for (const { file, doc } of docs) {
  if (doc.kind === 'Kustomization') continue;   // kustomize's file, no API object
  const Model = models[doc.apiVersion]?.[doc.kind];
  let why = Model ? '' : `no schema for ${doc.apiVersion} ${doc.kind} here`;
  try { if (Model) new Model(doc).validate(); } catch (e) { why = e.message; }
  result(`schema: ${file}: ${doc.kind}/${doc.metadata.name} is valid ${doc.apiVersion}`, !why, why);
}
const find = (kind, name) => docs.find((d) => d.doc.kind === kind && (!name || d.doc.metadata?.name === name))?.doc;

const nsDoc = find('Namespace');
const ns = nsDoc?.metadata?.name;
const inNs = docs.filter((d) => !['Namespace', 'Kustomization'].includes(d.doc.kind))
  .filter((d) => d.doc.metadata?.namespace !== ns).map((d) => `${d.file}:${d.doc.kind}/${d.doc.metadata?.name}`);
result('k8s: every namespaced resource is in the namespace of namespace.yaml', ns && inNs.length === 0, inNs.join(' '));

for (const { file, doc } of docs) {
  const spec = doc.spec?.template?.spec;
  if (!spec) continue;
  const where = `${file}:${doc.kind}/${doc.metadata.name}`;
  const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
  const missing = [];
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    fromVector([...(c.command ?? []), ...(c.args ?? [])], `${where} ${c.name}`, invocations);
    const pre = c.lifecycle?.preStop?.exec?.command;
    if (pre) fromVector(pre, `${where} ${c.name} preStop`, invocations);
    for (const m of c.volumeMounts ?? []) if (!volumes.has(m.name)) missing.push(m.name);
    // Kubernetes itself replaces $(NAME) in command and args when NAME is
    // one of the container's env variables: a shell's $(...) must never
    // look like one, or the shell would get the value, not the command
    const env = new Set((c.env ?? []).map((e) => e.name));
    const clash = [...(c.command ?? []), ...(c.args ?? [])].join(' ').match(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g)
      ?.filter((r) => env.has(r.slice(2, -1))) ?? [];
    result(`k8s: ${where} ${c.name}: no shell $(...) Kubernetes would take for an env variable`, clash.length === 0, clash.join(' '));
  }
  result(`k8s: ${where}: every volumeMount names a volume of the pod`, missing.length === 0, `missing: ${missing}`);
}

const ds = find('DaemonSet', 'sandbox-runner'), dep = find('Deployment', 'sandbox-gateway');
const rnSvc = find('Service', 'sandbox-runner');
result('k8s: the runner is a privileged DaemonSet on labelled nodes',
  ds?.spec.template.spec.containers[0].securityContext?.privileged === true &&
  ds?.spec.template.spec.nodeSelector?.['sandbox.dev/runner'] === 'true', JSON.stringify(ds?.spec.template.spec.nodeSelector));
result('k8s: the runner Service is headless and publishes not-ready runners',
  rnSvc?.spec.clusterIP === 'None' && rnSvc?.spec.publishNotReadyAddresses === true, JSON.stringify(rnSvc?.spec));
result('k8s: the gateway Deployment has 2 replicas', dep?.spec.replicas === 2, `${dep?.spec.replicas}`);

// The gateway's discovery names the runners' headless Service and its port;
// the runner listens on that port; the preStop drains.
const gwArgs = dep?.spec.template.spec.containers[0].args ?? [];
const argOf = (args, flag) => { const i = args.indexOf(flag); return i >= 0 ? String(args[i + 1]) : undefined; };
const svcPort = rnSvc?.spec.ports?.[0]?.port;
check('k8s: the gateway resolves the runners\' headless Service', argOf(gwArgs, '--runners-dns'),
  `${rnSvc?.metadata.name}.${ns}.svc.cluster.local`);
check('k8s: the gateway dials the runner Service\'s port', argOf(gwArgs, '--runner-port'), String(svcPort));
const rnScript = (ds?.spec.template.spec.containers[0].args ?? []).join(' ');
result('k8s: the runner listens with TLS on the pod address and the Service\'s port',
  rnScript.includes(`--listen-tls "$addr:${svcPort}"`) && rnScript.includes('addr=$POD_IP'), rnScript);
const pre = invocations.filter((i) => i.bin === 'sandbox-runner ctl').map((i) => i.sub);
result('k8s: the runner\'s preStop hook drains it, then waits on its status', pre.join() === 'drain,status', pre.join());

// The runner name mapping: the DaemonSet runs runner-name.sh from the
// ConfigMap kustomization.yaml makes of it; its names follow the runner
// name rule, are stable, keep a name that already follows it, and do not
// merge two nodes whose names differ only in what the rule drops.
const kust = find('Kustomization');
const cmName = kust?.configMapGenerator?.find((g) => (g.files ?? []).includes('runner-name.sh'))?.name;
const cmVol = ds?.spec.template.spec.volumes.find((v) => v.configMap)?.configMap.name;
result('k8s: the runner mounts the ConfigMap kustomization.yaml makes of runner-name.sh', cmName && cmName === cmVol, `${cmName} vs ${cmVol}`);
const rname = (n) => execFileSync('sh', [`${K8S}/runner-name.sh`, n], { encoding: 'utf8' }).trim();
const nodes = ['node1', 'node-1', 'ip-10-0-1-23.ec2.internal', 'ip-10-0-1-24.ec2.internal',
  'aks-nodepool1-12345678-vmss000000', 'gke-prod-default-pool-1a2b3c4d-x9z8', 'n'];
const names = nodes.map(rname);
result('runner-name: every name is 1..16 of [a-z0-9]', names.every((n) => /^[a-z0-9]{1,16}$/.test(n)), names.join(' '));
result('runner-name: a node name that is a runner name already is kept', names[0] === 'node1' && names[6] === 'n', names.join(' '));
result('runner-name: distinct nodes get distinct names', new Set(names).size === names.length, names.join(' '));
result('runner-name: the same node gets the same name', rname(nodes[2]) === names[2], '');
let refused;
try { execFileSync('sh', [`${K8S}/runner-name.sh`], { stdio: 'pipe' }); refused = false; } catch (e) { refused = e.status === 2; }
result('runner-name: no node name is a usage error (exit 2)', refused, '');

// -- Nomad: parsed with HCL v2's own parser (hcl2-parser: hashicorp/hcl
// through hcl2json), which checks the syntax, not Nomad's schema. Blocks
// come out as lists of bodies; labelled ones as { label: [body] }.
const hclFiles = readdirSync(NOMAD).filter((f) => f.endsWith('.hcl')).sort();
result('nomad: the runner and gateway jobs are there',
  hclFiles.join() === 'sandbox-gateway.nomad.hcl,sandbox-runner.nomad.hcl', hclFiles.join());
const jobs = {};
for (const f of hclFiles) {
  const [obj, err] = hcl.parseToObject(readFileSync(`${NOMAD}/${f}`, 'utf8'));
  // (the wrapped parser hands back an error without its text)
  result(`hcl: ${f} parses`, obj != null && !err, '(not valid HCL: the parser says no more)');
  for (const [name, [job]] of Object.entries(obj?.job ?? {})) jobs[name] = { file: f, job };
}
const labelled = (blocks) => Object.entries(blocks ?? {}).map(([name, [body]]) => ({ name, body }));
const tasksOf = (job) => labelled(job.group).flatMap((g) => labelled(g.body.task).map((t) => ({ group: g, task: t })));
for (const [name, { file, job }] of Object.entries(jobs))
  for (const { group, task } of tasksOf(job)) {
    const cfg = task.body.config?.[0];
    result(`nomad: ${file}: job ${name} task ${task.name} has a command and an args list`,
      typeof cfg?.command === 'string' && Array.isArray(cfg?.args), JSON.stringify(cfg));
    if (cfg) fromVector([cfg.command, ...(cfg.args ?? [])], `${file}`, invocations);
    jobs[name].task = { cfg, task: task.body, group: group.body };
  }
const nrn = jobs['sandbox-runner'], ngw = jobs['sandbox-gateway'];
result('nomad: the runners are a system job on clients with sandbox_runner meta and a name',
  nrn?.job.type === 'system' && JSON.stringify(nrn.job.constraint ?? []).includes('${meta.sandbox_runner}') &&
  JSON.stringify(nrn.job.constraint ?? []).includes('${meta.sandbox_runner_name}'), JSON.stringify(nrn?.job.constraint));
result('nomad: the runner runs on the host (raw_exec)', nrn?.task?.task.driver === 'raw_exec', nrn?.task?.task.driver);
const rnService = nrn?.task?.group.service?.[0];
const rnPort = nrn?.task?.group.network?.[0]?.port?.[rnService?.port]?.[0]?.static;
result('nomad: the runner registers its TLS port in Consul', rnService?.provider === 'consul' && rnPort === 7443,
  JSON.stringify(rnService));
check('nomad: the gateway resolves the runners\' Consul service (SRV)', argOf(ngw?.task?.cfg.args ?? [], '--runners-dns'),
  `_${rnService?.name}._tcp.service.consul`);
check('nomad: the runner\'s name is its node\'s meta', argOf(nrn?.task?.cfg.args ?? [], '--name'), '${meta.sandbox_runner_name}');
check('nomad: the runner listens with TLS on its port\'s address', argOf(nrn?.task?.cfg.args ?? [], '--listen-tls'),
  `\${NOMAD_ADDR_${rnService?.port}}`);
result('nomad: two gateways on distinct hosts', ngw?.task?.group.count === 2 &&
  JSON.stringify(ngw.task.group.constraint ?? []).includes('distinct_hosts'), '');
// every file the gateway is given under the secrets directory is one a
// template renders there, 0600 (the preview secret must be)
const rendered = new Map((ngw?.task?.task.template ?? []).map((t) => [t.destination.replace(/^secrets\//, '${NOMAD_SECRETS_DIR}/'), t]));
const given = (ngw?.task?.cfg.args ?? []).filter((a) => String(a).startsWith('${NOMAD_SECRETS_DIR}/'));
result('nomad: every secrets file the gateway is given is a template rendered 0600',
  given.length >= 7 && given.every((a) => rendered.get(a)?.perms === '0600'),
  given.filter((a) => rendered.get(a)?.perms !== '0600').join(' '));
result('nomad: each template reads the job\'s variable', [...rendered.values()].every((t) =>
  t.data.includes('nomadVar "nomad/jobs/sandbox-gateway"')), '');

// -- The systemd units (deploy/systemd): their ExecStart lines too
for (const f of readdirSync('deploy/systemd').filter((f) => f.endsWith('.service.in')).sort())
  for (const m of readFileSync(`deploy/systemd/${f}`, 'utf8').matchAll(/^ExecStart=(.*)$/gm))
    fromScript(m[1].replace(/@BINDIR@/g, '/usr/bin'), `systemd/${f}`, invocations);

// -- The flags against the binaries' --help
for (const bin of ['sandbox-gateway', 'sandbox-runner']) {
  const used = invocations.filter((i) => i.bin === bin);
  result(`flags: the files start ${bin} (k8s and nomad)`, used.some((i) => i.where.endsWith('.hcl')) &&
    used.some((i) => !i.where.endsWith('.hcl')), used.map((i) => i.where).join(', '));
  const flags = [...new Set(used.flatMap((i) => i.flags))].sort();
  for (const fl of flags)
    result(`flags: ${bin} ${fl} is in its --help`, known[bin].has(fl),
      `(passed in ${used.filter((i) => i.flags.includes(fl)).map((i) => i.where).join(', ')})`);
}
const ctl = invocations.filter((i) => i.bin === 'sandbox-runner ctl');
for (const sub of [...new Set(ctl.map((i) => i.sub))].sort())
  result(`flags: sandbox-runner's --help offers ctl ${sub}`, /\bctl\b/.test(runnerHelp) && new RegExp(`\\b${sub}\\b`).test(runnerHelp),
    '(the preStop hook runs it)');
for (const fl of [...new Set(ctl.flatMap((i) => i.flags))].sort())
  result(`flags: sandbox-runner ctl ${fl} is in the runner's --help`, known['sandbox-runner'].has(fl), '');

function check(name, got, want) { result(name, got === want, `(got '${got}', want '${want}')`); }
finish();
