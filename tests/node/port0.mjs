// Runs a Node server that listens on the port in its PORT variable (server-everything's
// HTTP and SSE modes) on a port the system picks instead, and prints the port it got:
//
//   node port0.mjs SERVER.js [ARG...]     ->  "port0: listening on 127.0.0.1:PORT" on stderr
//
// A test that chose a free port first and then told the server to take it races with
// everything else on the machine (another test, another run), which may take it between
// the two. Binding port 0 cannot collide, but the server only echoes the PORT it was
// given, so this reads the bound port from the listening socket itself.
import net from "node:net";
import { pathToFileURL } from "node:url";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  this.once("listening", () => {
    const address = this.address();
    if (address !== null && typeof address === "object") {
      console.error(`port0: listening on 127.0.0.1:${address.port}`);
    }
  });
  return listen.apply(this, args);
};

const [server, ...rest] = process.argv.slice(2);
process.argv = [process.argv[0], server, ...rest];
process.env.PORT = "0";
await import(pathToFileURL(server).href);
