// Loaded before Next's server (node --require ./client-address.cjs server.js). The backend
// throttles failed sign-ins per client address and takes that address from this server's
// X-Forwarded-For; Next passes on whatever X-Forwarded-For the client sent. So each request's
// header is set here to the connection's peer, unless that peer is one of TRUSTED_PROXIES (the
// addresses of a reverse proxy in front of this app, comma-separated), whose header is kept.
const http = require("node:http");

const trusted = new Set(
  (process.env.TRUSTED_PROXIES ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean),
);
const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function emitWithClientAddress(event, request, ...rest) {
  if (event === "request") {
    const peer = (request.socket?.remoteAddress ?? "").replace(/^::ffff:/, "");
    if (!trusted.has(peer) || !request.headers["x-forwarded-for"]) request.headers["x-forwarded-for"] = peer;
  }
  return emit.call(this, event, request, ...rest);
};
