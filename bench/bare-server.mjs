// The limit a Node server reaches on this machine: node:http alone, answering
// every request with one fixed answer (see startBareServer in processes.mjs).
// It reads each request's body before answering, as any server must, and
// does nothing else: no routing, no parsing, no database.
//
//   node bench/bare-server.mjs <port> <status> <content-type> <file with the body>
import { readFileSync } from "node:fs";
import { createServer } from "node:http";

const [port, status, contentType, bodyFile] = process.argv.slice(2);
const body = readFileSync(bodyFile);
const headers = { "content-type": contentType, "content-length": String(body.length) };

createServer((req, res) => {
  req.on("end", () => res.writeHead(Number(status), headers).end(body));
  req.resume();
}).listen(Number(port), "127.0.0.1", () => console.log("bare server listening"));
