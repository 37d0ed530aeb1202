import { fileURLToPath } from "node:url";

/**
 * This folder is a self-contained project: pin Next's workspace root to it, so a lockfile in a
 * parent directory never changes where modules are resolved from or how `standalone` is laid out.
 */
const root = fileURLToPath(new URL(".", import.meta.url));

/** @type {import("next").NextConfig} */
const nextConfig = {
  // The Dockerfile runs the self-contained server that `standalone` writes to .next/standalone.
  output: "standalone",
  outputFileTracingRoot: root,
  turbopack: { root },
  poweredByHeader: false,
  // The app's icon is src/app/icon.svg (linked from every page); browsers and crawlers that ask
  // for the conventional /favicon.ico get it too instead of a 404.
  async rewrites() {
    return [{ source: "/favicon.ico", destination: "/icon.svg" }];
  },
  reactStrictMode: true,
};

export default nextConfig;
