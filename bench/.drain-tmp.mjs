import http from 'node:http';
const agent = new http.Agent({ keepAlive: true, maxSockets: 10 });
const pid = Number(process.argv[2]);
let ok = 0, failed = {}, stop = false, close = 0;
const body = JSON.stringify({ query: '{ statusPage { status { indicator } } }' });
const one = () => new Promise((resolve, reject) => {
  const req = http.request({ host: '127.0.0.1', port: 4000, path: '/graphql', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
    if (res.headers.connection === 'close') close++;
    res.resume(); res.on('end', resolve); res.on('error', reject);
  });
  req.on('error', reject); req.end(body);
});
async function loop() {
  while (!stop) {
    try { await one(); ok++; }
    catch (e) { const k = e.code ?? e.message; failed[k] = (failed[k] ?? 0) + 1; if (k === 'ECONNREFUSED') return; }
  }
}
const loops = Array.from({ length: 10 }, loop);
await new Promise((r) => setTimeout(r, 1500));
const before = ok;
process.kill(pid, 'SIGTERM');
setTimeout(() => { stop = true; }, 4000);
await Promise.all(loops);
console.log({ okBeforeSignal: before, okAfterSignal: ok - before, connectionClose: close, failed });
