import { request as httpRequest, type IncomingHttpHeaders } from "node:http";

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: () => Record<string, unknown>;
}

/**
 * A request with any headers and from any local address, over plain node:http: fetch will not send
 * a foreign Host, and 127.0.0.2 is another client of the loopback.
 */
export function call(
  base: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: string; localAddress?: string } = {},
): Promise<RawResponse> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: u.hostname,
        port: u.port,
        method,
        path,
        ...(options.localAddress !== undefined ? { localAddress: options.localAddress } : {}),
        headers: {
          ...(options.body !== undefined ? { "content-length": String(Buffer.byteLength(options.body)) } : {}),
          ...options.headers,
        },
      },
      (res) => {
        let text = "";
        res.on("data", (d: Buffer) => {
          text += d.toString();
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) }));
      },
    );
    req.on("error", reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

/** A JSON body with its content type, for `call`. */
export const json = (body: unknown, headers: Record<string, string> = {}) => ({
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(body),
});
