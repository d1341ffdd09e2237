// Conformance harness only: the runner has no option for auth headers, so this forwards to
// salesplan's /mcp adding `Authorization: Bearer <key>` (unless the request has its own). The
// Host header is passed on unchanged, so that the server's DNS-rebinding protection sees what
// the runner sent. node auth-proxy.cjs PORT TARGET KEY
const http = require('http');
const [,, listenPort, target, key] = process.argv;
const t = new URL(target);
http.createServer((req, res) => {
  const headers = { ...req.headers };
  if (!headers.authorization) headers.authorization = `Bearer ${key}`;
  const up = http.request({ host: t.hostname, port: t.port, path: req.url, method: req.method, headers }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    r.pipe(res);
  });
  up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
  res.on('close', () => up.destroy());
}).listen(Number(listenPort), '127.0.0.1');
