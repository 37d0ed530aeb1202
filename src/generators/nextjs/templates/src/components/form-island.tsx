"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, type ReactNode, useContext, useEffect, useLayoutEffect, useRef, useState } from "react";

import { EditDone } from "@/components/edit-context";
import { notify } from "@/components/toaster";
import type { FormResult } from "@/lib/forms";
import { own } from "@/lib/schema";

type Values = Record<string, string | boolean>;

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** A datetime-local value for `iso` in the browser's zone. */
function localInput(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime())
    ? ""
    : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** The inputs' values; an edit sends only what changed (PATCH is partial). */
function collect(form: HTMLFormElement, edit: boolean): Values {
  const out: Values = {};
  for (const el of form.querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>("[name]")) {
    let value: string | boolean;
    let changed: boolean;
    if (el instanceof HTMLInputElement && el.type === "checkbox") {
      value = el.checked;
      changed = el.checked !== el.defaultChecked;
    } else if (el instanceof HTMLSelectElement) {
      value = el.value;
      changed = [...el.options].some((o) => o.selected !== o.defaultSelected);
    } else {
      value = el.value;
      changed = el.value !== el.defaultValue;
      // A date-time typed in the browser's zone goes to the server as that instant.
      if (el.type === "datetime-local" && value !== "") {
        const d = new Date(value);
        if (!Number.isNaN(d.getTime())) value = d.toISOString();
      }
    }
    if (!edit || changed) out[el.name] = value;
  }
  return out;
}

/**
 * The interactive part of a server-rendered form: on submit it sends the inputs to the Server
 * Action, then either says what happened (a toast) and moves on, or marks the fields the answer
 * names (aria-invalid, the message below each), announces the summary (role=alert) and moves the
 * focus to the first invalid field. Date-time inputs and their zone labels use the browser's zone.
 */
export function FormIsland({
  action,
  after,
  testId,
  alertIcon,
  children,
}: {
  action: (values: Values) => Promise<FormResult>;
  after?: string;
  testId: string;
  alertIcon: ReactNode;
  children: ReactNode;
}) {
  const router = useRouter();
  const done = useContext(EditDone);
  const form = useRef<HTMLFormElement>(null);
  const [summary, setSummary] = useState("");
  const [busy, setBusy] = useState(false);
  // The server-rendered Cancel button of the edit form (data-cancel) closes it.
  useEffect(() => {
    const el = form.current;
    if (!el || !done) return;
    const cancel = (e: MouseEvent) => {
      if ((e.target as HTMLElement).closest("[data-cancel]")) done(false);
    };
    el.addEventListener("click", cancel);
    return () => el.removeEventListener("click", cancel);
  }, [done]);
  // Before the first paint of the form: the browser's zone in the labels and date-time inputs.
  useLayoutEffect(() => {
    const el = form.current;
    if (!el) return;
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    for (const z of el.querySelectorAll("[data-zone]")) z.textContent = `(${zone})`;
    for (const input of el.querySelectorAll<HTMLInputElement>("input[data-iso]")) {
      const iso = input.getAttribute("data-iso");
      if (iso) input.value = input.defaultValue = localInput(iso);
    }
  }, []);

  function mark(el: HTMLFormElement, errors: Record<string, string>) {
    for (const old of el.querySelectorAll("[data-error]")) old.remove();
    for (const input of el.querySelectorAll("[aria-invalid]")) {
      input.removeAttribute("aria-invalid");
      input.removeAttribute("aria-describedby");
    }
    let first: HTMLElement | null = null;
    for (const box of el.querySelectorAll<HTMLElement>("[data-field]")) {
      const name = box.dataset.field ?? "";
      const message = own(errors, name);
      const input = box.querySelector<HTMLElement>(`#field-${name}`);
      box.querySelector<HTMLElement>("[data-hint]")?.toggleAttribute("hidden", Boolean(message));
      if (!message || !input) continue;
      input.setAttribute("aria-invalid", "true");
      input.setAttribute("aria-describedby", `field-${name}-error`);
      const p = document.createElement("p");
      p.id = `field-${name}-error`;
      p.dataset.error = "";
      p.dataset.testid = `field-error-${name}`;
      p.className = "text-destructive text-sm";
      p.textContent = message;
      box.append(p);
      first ??= input;
    }
    first?.focus();
  }

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const el = event.currentTarget;
    if (busy) return;
    setBusy(true);
    try {
      const result = await action(collect(el, done !== null));
      if (result.ok) {
        mark(el, {});
        setSummary("");
        notify(result.message);
        if (done) done(true);
        else if (after) router.push(after);
        return;
      }
      setSummary(result.summary);
      mark(el, result.errors);
    } catch {
      setSummary("The form could not be sent. Check the connection and try again.");
    } finally {
      setBusy(false);
    }
  }

  return (
    <form ref={form} noValidate onSubmit={submit} aria-busy={busy} data-testid={testId} className="space-y-6">
      {summary ? (
        <div
          role="alert"
          data-testid="form-error"
          className="border-destructive/30 bg-destructive/5 text-destructive flex items-start gap-2 rounded-lg border px-4 py-3 text-sm"
        >
          {alertIcon}
          <div>{summary}</div>
        </div>
      ) : null}
      {children}
    </form>
  );
}
