// Starts the reference's egress proxy (Anthropic's sandbox-runtime, "srt") the way srt
// itself runs it: SandboxManager.initialize() in a node process, which opens srt's HTTP
// proxy (and its SOCKS mux) on a loopback port, without wrapping any command. Used by
// vigil_proxy_bench to measure srt's proxy side by side with vigil's.
//
//   SRT_PKG=<dir of @anthropic-ai/sandbox-runtime> node srt_proxy.mjs
//
// Prints "srt-proxy port <N> token <T>" on stdout once it listens (srt requires
// Proxy-Authorization: Basic base64("srt:" + T) from every client; the sandboxed command
// normally gets it inside HTTP_PROXY). Allows 127.0.0.1 (an IP literal on srt's allow
// list passes its resolved-address guard), so a loopback server is reachable. Exits on
// SIGTERM/SIGINT.
const pkg = process.env.SRT_PKG;
if (!pkg) {
  console.error('srt_proxy.mjs: set SRT_PKG to the sandbox-runtime package directory');
  process.exit(2);
}
const { SandboxManager } = await import(pkg + '/dist/index.js');
const config = {
  network: { allowedDomains: ['127.0.0.1'], deniedDomains: [] },
  filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
};
await SandboxManager.initialize(config, undefined, false);
console.log(`srt-proxy port ${SandboxManager.getProxyPort()} token ${SandboxManager.getProxyAuthToken()}`);
const stop = async () => {
  await SandboxManager.reset();
  process.exit(0);
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
