"use client";

import { useRouter } from "next/navigation";
import { type FormEvent, useState } from "react";
import { ErrorNotice } from "@/components/error-notice";
import { LoaderCircle, LogIn } from "@/components/icons";
import { Button } from "@/components/ui/button";
import { Input } from "@/components/ui/input";
import { Label } from "@/components/ui/label";
import { safeNext } from "@/lib/next-path";

/**
 * Signs in through this app's /session route, which asks the backend's /auth/login and keeps the
 * bearer token in an httpOnly cookie: no script of the page ever holds it. Then back to the page
 * that sent the user here (`?next=`, a path of this app only), or the dashboard.
 */
export default function LoginPage() {
  const router = useRouter();
  const [email, setEmail] = useState("");
  const [password, setPassword] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const answer = await fetch("/session", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ email, password }),
      });
      if (answer.ok) {
        // Read at submit, not render: the page stays static (useSearchParams would need a Suspense boundary).
        router.replace(safeNext(new URLSearchParams(window.location.search).get("next")));
        router.refresh();
        return;
      }
      const body = (await answer.json().catch(() => ({}))) as { message?: string };
      setError(answer.status === 401 ? "Wrong email or password." : (body.message ?? `Sign-in failed (${answer.status}).`));
    } catch {
      setError("Cannot reach the server.");
    } finally {
      setBusy(false);
    }
  }

  return (
    <div className="flex min-h-[70vh] items-center justify-center">
      <div className="bg-card text-card-foreground flex w-full max-w-sm flex-col gap-6 rounded-xl border py-6 shadow-sm">
        <div className="grid gap-1.5 px-6">
          <h1 className="text-xl leading-none font-semibold">Sign in</h1>
          <p className="text-muted-foreground text-sm">Use the account your administrator gave you.</p>
        </div>
        <div className="px-6">
          <form onSubmit={submit} className="space-y-4" data-testid="login-form">
            <div className="space-y-2">
              <Label htmlFor="email">Email</Label>
              <Input
                id="email"
                type="email"
                autoComplete="username"
                required
                value={email}
                onChange={(e) => setEmail(e.target.value)}
                data-testid="login-email"
              />
            </div>
            <div className="space-y-2">
              <Label htmlFor="password">Password</Label>
              <Input
                id="password"
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onChange={(e) => setPassword(e.target.value)}
                data-testid="login-password"
              />
            </div>
            {error ? <ErrorNotice testId="login-error">{error}</ErrorNotice> : null}
            <Button type="submit" className="w-full" disabled={busy} data-testid="login-submit">
              {busy ? <LoaderCircle className="animate-spin" /> : <LogIn />}
              Sign in
            </Button>
          </form>
        </div>
      </div>
    </div>
  );
}
