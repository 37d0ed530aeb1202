"use client";

import { LogIn, LogOut } from "@/components/icons";
import Link from "next/link";
import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";

import { getToken, setToken } from "@/lib/api";

const itemClass =
  "text-sidebar-foreground/80 hover:bg-sidebar-accent hover:text-sidebar-accent-foreground flex h-9 w-full items-center gap-2 rounded-md px-3 text-sm font-medium transition-colors [&_svg]:size-4";

/** The sidebar's sign-in / sign-out entry; follows the stored token across tabs and logins. */
function AuthStatus() {
  const router = useRouter();
  const [signedIn, setSignedIn] = useState(false);
  useEffect(() => {
    const update = () => setSignedIn(getToken() !== null);
    update();
    window.addEventListener("charter-auth", update);
    window.addEventListener("storage", update);
    return () => {
      window.removeEventListener("charter-auth", update);
      window.removeEventListener("storage", update);
    };
  }, []);
  if (!signedIn) {
    return (
      <Link href="/login" className={itemClass} data-testid="nav-login">
        <LogIn />
        Sign in
      </Link>
    );
  }
  return (
    <button
      type="button"
      className={itemClass}
      data-testid="nav-logout"
      onClick={() => {
        setToken(null);
        router.push("/login");
      }}
    >
      <LogOut />
      Sign out
    </button>
  );
}

export { AuthStatus };
