"use server";

import { request, toApiError } from "@/lib/request";
import "@/lib/server-api";

/** What a browser-side call gets back: the record, or why not (a plain object, not an Error). */
export type CallResult<T> = { ok: true; data: T } | { ok: false; status: number; message: string };

/**
 * A call to the backend on behalf of the browser (delete, workflow moves): the server adds the
 * session's token; the page gets the answer as data.
 */
export async function callApi<T>(method: "PUT" | "DELETE", path: string, body?: unknown): Promise<CallResult<T>> {
  try {
    return { ok: true, data: await request<T>(method, path, body) };
  } catch (e) {
    const err = toApiError(e);
    return { ok: false, status: err.status, message: err.message };
  }
}
